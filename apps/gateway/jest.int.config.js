/** Integration tests: the gateway in front of throwaway Fastify upstreams on ephemeral ports. */
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'gateway:int',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.int-spec.ts'],
  testTimeout: 30000,
};
