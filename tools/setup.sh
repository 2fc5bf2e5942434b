#!/usr/bin/env bash
# Installs what the project needs on a fresh clone: npm dependencies (exactly the lock file).
# Idempotent: skips work that is already done.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm dependencies (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
fi
