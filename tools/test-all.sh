#!/usr/bin/env bash
# Runs every test tier on a fresh clone, in order of cost: lint, typecheck, build, unit specs,
# integration tests (real Postgres, Redis, Kafka), the e-invoices through the EN 16931 validator (a
# JVM tool), end-to-end tests (the built services as processes), the resilience tier (faults and
# hostile input against those processes) and the containers tier (images, docker-compose.yml, kube
# play). Installs what the tiers need when it is absent (tools/setup.sh --containers: nginx,
# Chromium, kcat, poppler-utils, a JDK and Maven, podman and its tools, with apt; the containers
# tier is skipped, saying why, only where they cannot be installed) and brings up the
# infrastructure itself. Ends with each failed test's name and message head, then one line:
# "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
# Every tier runs for real: no task result is replayed from a cache (CI must not pass on stale results).
export NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false NX_SKIP_NX_CACHE=true

bash tools/setup.sh --containers
bash tools/infra/up.sh
rm -rf tmp/test-results

status=0
timings=()
run() {
  echo "::: $*"
  local began=$SECONDS label="$*"
  if ! "$@"; then status=1; fi
  # How long each tier took, by its command without `npx nx` and the flags.
  label=${label#npx nx }
  timings+=("$(( SECONDS - began )) s  ${label%% --*}")
}
run npx nx run-many -t lint typecheck --outputStyle=static
# Every app once. The tiers after it use that build (--excludeTaskDependencies): with the cache off,
# each tier's dependsOn would otherwise compile every app again (four builds per run).
run npx nx run-many -t build --outputStyle=static
run npx nx run-many -t test --excludeTaskDependencies --outputStyle=static
if [ "$status" -eq 0 ]; then
  # A sixth resource generated into a scratch copy of the workspace, then typechecked, built and
  # linted there (tools/nx-plugin/README.md; about a minute).
  run npx nx run nx-plugin:test-generator --outputStyle=static
  run npx nx run-many -t test-int --parallel=1 --excludeTaskDependencies --outputStyle=static
  # The invoices' EN 16931 e-invoices (CII and UBL) through the Mustang validator on the JVM
  # (tools/einvoice-validator; Maven fetches it once; a few minutes on 2 cores).
  run npx nx run-many -t test-validator --parallel=1 --excludeTaskDependencies --outputStyle=static
  run npx nx run-many -t e2e --parallel=1 --excludeTaskDependencies --outputStyle=static
  # Faults injected into the real processes and the hostile-input corpus (docs/resilience.md);
  # replicated.resilience-spec.ts (items 10-14: a 3-broker Kafka it starts and stops, the Redis
  # Cluster's replicas, two instances of every service) adds about 5 minutes of it.
  run npx nx run-many -t resilience --parallel=1 --excludeTaskDependencies --outputStyle=static
  # The images built, docker-compose.yml and the Kubernetes dev overlay run with podman, the e2e
  # suite against the compose stack (deploy/containers.sh; skipped, saying why, only where podman
  # could not be installed).
  run npx nx run deploy:containers --outputStyle=static
fi

node -e '
  const fs = require("fs"), dir = "tmp/test-results";
  let passed = 0, failed = 0, skipped = 0;
  const failures = [], suites = [];
  for (const f of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    const r = JSON.parse(fs.readFileSync(`${dir}/${f}`, "utf8"));
    passed += r.passed; failed += r.failed; skipped += r.skipped;
    failures.push(...(r.failures ?? []));
    suites.push(...(r.suites ?? []));
  }
  if (passed + failed === 0) failed = 1;
  for (const { test, message } of failures) {
    console.log(`test-all: FAILED ${test}`);
    console.log(message.split("\n").map((line) => `    ${line}`).join("\n"));
  }
  console.log("test-all: the slowest test files:");
  for (const { file, ms } of suites.sort((a, b) => b.ms - a.ms).slice(0, 12)) console.log(`  ${(ms / 1000).toFixed(0).padStart(4)} s  ${file}`);
  console.log(`test-all: ${passed} passed, ${failed} failed, ${skipped} skipped`);
  process.exitCode = failed > 0 ? 1 : 0;
' || status=1
echo "test-all: time per tier:"
printf '  %s\n' "${timings[@]}"
echo "test-all: finished in $(( $(date +%s) - started )) s with status ${status}"
exit "$status"
