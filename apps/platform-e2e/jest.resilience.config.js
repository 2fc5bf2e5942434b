/**
 * Resilience tier (docs/resilience.md): the built services as processes against real Postgres,
 * Redis and Kafka, with faults injected into the real processes. Figures go to
 * tmp/resilience/figures.jsonl.
 */
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'platform-resilience',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/resilience/**/*.resilience-spec.ts'],
  testTimeout: 600000,
};
