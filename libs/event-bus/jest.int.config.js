/** Integration tests: a real Kafka broker (started by tools/infra/up.sh). */
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'event-bus:int',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.int-spec.ts'],
  testTimeout: 60000,
  // kafkajs keeps reconnect timers of the deliberately unreachable client alive for a while after
  // disconnect(); do not let them hold the run open.
  forceExit: true,
};
