// Appends each Jest run's counts to tmp/test-results/ so tools/test-all.sh can print one closing
// line ("N passed, N failed") for every tier together, followed by the name and the first lines of
// every failure: CI keeps only the tail of a long log, so a failure must be readable from there.
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
        failures: failures(results),
        // How long each test file took: tools/test-all.sh prints the slowest, where CI time goes.
        suites: (results.testResults ?? []).map((suite) => ({
          file: path.relative(path.join(__dirname, '..', '..'), suite.testFilePath ?? ''),
          ms: (suite.perfStats?.end ?? 0) - (suite.perfStats?.start ?? 0),
        })),
      }),
    );
  }
}

/** Each failed test (or suite that failed to run) with the head of its message, colours stripped. */
function failures(results) {
  const head = (text) =>
    String(text ?? '')
      .replace(/\u001b\[[0-9;]*m/g, '')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .slice(0, 12)
      .join('\n');
  const out = [];
  for (const suite of results.testResults ?? []) {
    const file = path.relative(path.join(__dirname, '..', '..'), suite.testFilePath ?? '');
    if (suite.testExecError || (suite.failureMessage && suite.numFailingTests === 0)) {
      out.push({ test: `${file} (suite)`, message: head(suite.testExecError?.message ?? suite.failureMessage) });
    }
    for (const test of suite.testResults ?? []) {
      if (test.status === 'failed') {
        out.push({ test: `${file} › ${test.fullName}`, message: head(test.failureMessages?.join('\n')) });
      }
    }
  }
  return out;
}

module.exports = SummaryReporter;
