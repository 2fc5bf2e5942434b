/** Unit specs: the server through fastify.inject, the page's pure modules; no network, no browser. */
const preset = require('../../jest.preset.js');

module.exports = {
  ...preset,
  displayName: 'settings-web',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
  // The page's modules import each other with the `.js` specifier the browser needs.
  moduleNameMapper: { ...preset.moduleNameMapper, '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    ...preset.transform,
    // @fastify/static requires content-disposition 3, which ships ESM only. Node 20 loads it with
    // require(esm); Jest does not, so SWC turns that one package into CommonJS for the specs.
    '/node_modules/content-disposition/.+\\.js$': ['@swc/jest', { module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!content-disposition/)'],
};
