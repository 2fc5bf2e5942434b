/** End-to-end tests: the built services as processes, real Postgres, Redis and Kafka. */
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'platform-e2e',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.e2e-spec.ts'],
  testTimeout: 180000,
};
