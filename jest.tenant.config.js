/**
 * `npm run test:tenant`: the journeys, which take minutes of real time each and so stay out of
 * `npm test`:
 * - test/journeys: the local processes' (an indexer killed at random points and restarted, a
 *   writer frozen and replaced, `npm start`, the operator's quick start as written, replicas
 *   sharing /ws limits, `npm run build`'s tree, the operator's life with tenants, a re-index as
 *   processes, releasing as docs/deploy.md types it, an API process drained), on `npm test`'s
 *   per-run template database;
 * - test/tenant: the users' journeys on one tenant run as the kit deploys it (local/tenant), one
 *   tenant at a time.
 */
// maxWorkers, testTimeout and workerGracefulExitTimeout are the run's, not a project's.
const { maxWorkers, testTimeout, workerGracefulExitTimeout, ...base } = require('./jest.config.js');

/** @type {import('jest').Config} */
module.exports = {
  maxWorkers: 1,
  testTimeout: 600000,
  workerGracefulExitTimeout,
  projects: [
    {
      ...base,
      rootDir: __dirname,
      displayName: 'journeys',
      roots: ['<rootDir>/test/journeys'],
      testPathIgnorePatterns: ['/node_modules/'],
    },
    {
      ...base,
      rootDir: __dirname,
      displayName: 'tenant',
      roots: ['<rootDir>/test/tenant'],
      testPathIgnorePatterns: ['/node_modules/'],
      globalSetup: undefined,
      globalTeardown: undefined,
    },
  ],
};
