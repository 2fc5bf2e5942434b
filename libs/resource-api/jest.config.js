/** Unit specs: next to the code, no network. */
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'resource-api',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
};
