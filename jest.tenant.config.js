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
  // The upgrade journey (test/tenant/upgrade.test.ts) runs with TENANT_UPGRADE=1: one run of two
  // delivered 2 duplicate /ws updates across the hand-over, under investigation (CHANGELOG 0.2.0).
  testPathIgnorePatterns: process.env.TENANT_UPGRADE ? [] : ['<rootDir>/test/tenant/upgrade.test.ts'],
  globalSetup: undefined,
  globalTeardown: undefined,
  maxWorkers: 1,
  testTimeout: 600000,
};
