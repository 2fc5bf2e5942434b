/** Unit specs: next to the code, no network, no nginx. */
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'gateway',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
};
