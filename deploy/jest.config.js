/**
 * Offline checks of everything that deploys the platform: docker-compose.yml against the compose
 * schema, every Kubernetes manifest (base and rendered overlays) against the Kubernetes schemas,
 * and the agreement of routes and environment variables with what the built services declare.
 */
module.exports = {
  ...require('../jest.preset.js'),
  displayName: 'deploy',
  rootDir: __dirname,
  testMatch: ['<rootDir>/tests/**/*.spec.ts'],
  testTimeout: 60000,
};
