/** Integration tests: real Postgres, Redis and Kafka (started by tools/infra/up.sh). */
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'client-service:int',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.int-spec.ts'],
  testTimeout: 60000,
};
