// The Jest configuration of a project from its directory alone: each app's jest.config.js and
// jest.int.config.js (and jest.validator.config.js where it has one) is one line, `module.exports = require('../../tools/jest/project').unit(__dirname);`,
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

/**
 * EN 16931 e-invoices through the Mustang validator on the JVM (tools/einvoice-validator): a corpus
 * is generated and validated in one run, so one test file may take minutes.
 */
function validator(dir) {
  return { ...preset, displayName: `${basename(dir)}:validator`, rootDir: dir, testMatch: ['<rootDir>/src/**/*.validator-spec.ts'], testTimeout: 900000 };
}

module.exports = { unit, int, validator };
