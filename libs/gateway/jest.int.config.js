/** Integration tests: Debian's nginx with the rendered configuration in front of throwaway upstreams. */
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'gateway:int',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.int-spec.ts'],
  testTimeout: 30000,
};
