/** Unit specs of the plugin (the inferred targets, the generator on an in-memory tree) and the workspace-wide checks of src/workspace: fast, no network. */
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'nx-plugin',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
};
