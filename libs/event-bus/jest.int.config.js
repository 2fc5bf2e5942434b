/** Integration tests: a real Kafka broker (started by tools/infra/up.sh). */
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'event-bus:int',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.int-spec.ts'],
  testTimeout: 60000,
};
