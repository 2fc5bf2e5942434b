/** Unit specs: next to the code, fakes allowed, no network. */
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'payment-service',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
};
