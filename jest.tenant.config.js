/**
 * `npm run test:tenant`: the users' journeys on one tenant run as the kit deploys it
 * (local/tenant, test/tenant): minutes of real time (alerts wait out their rules' `for`), one
 * tenant at a time.
 */
const base = require('./jest.config.js');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  roots: ['<rootDir>/test/tenant'],
  testPathIgnorePatterns: [],
  globalSetup: undefined,
  globalTeardown: undefined,
  maxWorkers: 1,
  testTimeout: 600000,
};
