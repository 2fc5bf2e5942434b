/** Unit specs: next to the code, no network (the HTTP layer is a fake fetch). */
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'sdk',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
};
