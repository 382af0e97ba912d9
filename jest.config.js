/** @type {import('jest').Config} */
module.exports = {
  // Node's, naming what held a worker open if Jest has to force it to exit (test/support/node-environment.js).
  testEnvironment: '<rootDir>/test/support/node-environment.js',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // The fault suite (`npm run test:faults`, jest.faults.config.js) takes minutes of real outages;
  // `npm run test:tenant` (jest.tenant.config.js) runs the journeys: the tenant's (minutes of
  // alerts' `for`) and the local processes' (kills, freezes, hand-overs, the quick starts).
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/faults/', '<rootDir>/test/tenant/', '<rootDir>/test/journeys/'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
    // ESM-only dependencies that Node loads with require(esm) but Jest's module system cannot.
    '^.+/node_modules/(@scure/base|@kubernetes/client-node|openid-client|oauth4webapi|jose|@marcbachmann/cel-js)/.+\\.js$': [
      '@swc/jest',
      { jsc: { parser: { syntax: 'ecmascript' }, target: 'es2022' }, module: { type: 'commonjs' } },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!(@scure/base|@kubernetes/client-node|openid-client|oauth4webapi|jose|@marcbachmann/cel-js)/)'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // Integration suites each create their own database; two workers fit a 2-core machine.
  maxWorkers: 2,
  // How long a worker has to be gone once the run is over (Jest's default is 500 ms): a worker of
  // 1.2 GB takes about half a second to leave even by `process.exit`
  // (test/support/node-environment.js). One still there after 5 s is held open, and says by what.
  workerGracefulExitTimeout: 5000,
  testTimeout: 30000,
};
