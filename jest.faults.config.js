/**
 * `npm run test:faults`: real outages (Redis stopped, PostgreSQL cut, replicas and the indexer
 * killed) against real processes. One scenario at a time: each loads the machine on purpose.
 */
const base = require('./jest.config.js');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  roots: ['<rootDir>/test/faults'],
  testPathIgnorePatterns: [],
  globalSetup: '<rootDir>/test/faults/global-setup.ts',
  globalTeardown: '<rootDir>/test/faults/global-teardown.ts',
  maxWorkers: 1,
  testTimeout: 300000,
};
