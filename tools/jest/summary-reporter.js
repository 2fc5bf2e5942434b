// Appends each Jest run's counts to tmp/test-results/ so tools/test-all.sh can print one closing
// line ("N passed, N failed") for every tier together.
const fs = require('node:fs');
const path = require('node:path');

class SummaryReporter {
  constructor(globalConfig) {
    this.dir = path.join(__dirname, '..', '..', 'tmp', 'test-results');
    this.name = (globalConfig.projects?.[0] ?? globalConfig.rootDir ?? 'jest').toString();
  }

  onRunComplete(_contexts, results) {
    fs.mkdirSync(this.dir, { recursive: true });
    const file = path.join(this.dir, `${Date.now()}-${process.pid}.json`);
    fs.writeFileSync(
      file,
      JSON.stringify({
        passed: results.numPassedTests,
        failed: results.numFailedTests + results.numRuntimeErrorTestSuites,
        skipped: results.numPendingTests + results.numTodoTests,
      }),
    );
  }
}

module.exports = SummaryReporter;
