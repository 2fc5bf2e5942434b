// The Jest configuration of a project from its directory alone: each app's jest.config.js and
// jest.int.config.js is one line, `module.exports = require('../../tools/jest/project').unit(__dirname);`,
// and the name Jest shows is the directory's (the Nx project's).
const { basename } = require('node:path');
const preset = require('../../jest.preset.js');

/** Unit specs: next to the code, fakes allowed, no network. */
function unit(dir) {
  return { ...preset, displayName: basename(dir), rootDir: dir, testMatch: ['<rootDir>/src/**/*.spec.ts'] };
}

/** Integration tests: real Postgres, Redis and Kafka (started by tools/infra/up.sh). */
function int(dir) {
  return { ...preset, displayName: `${basename(dir)}:int`, rootDir: dir, testMatch: ['<rootDir>/src/**/*.int-spec.ts'], testTimeout: 60000 };
}

module.exports = { unit, int };
