/**
 * The proof (`nx run nx-plugin:test-generator`): a sixth resource generated into a scratch copy of
 * the workspace, then typechecked, built and linted there. Minutes, not seconds: its own target.
 */
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'nx-plugin:generator',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.generator-spec.ts'],
  testTimeout: 600000,
};
