#!/usr/bin/env bash
# Stops what tools/stack/start.sh started (every instance of every service and the gateway, by their
# pid files: <name>.pid, <name>-<i>.pid, gateway.pid).
# The infrastructure keeps running unless --all is given: then tools/infra/down.sh stops Kafka,
# and Postgres and Redis if tools/infra/up.sh had started them.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
STACK_DIR="${INVOICING_STATE_DIR:-$ROOT/.infra}/stack"
LOG_DIR="$STACK_DIR/logs"

all=false
for arg in "$@"; do
  case "$arg" in
    --all) all=true ;;
    *) echo "usage: tools/stack/stop.sh [--all]" >&2; exit 2 ;;
  esac
done

# shellcheck source=tools/stack/lib.sh
source tools/stack/lib.sh

shopt -s nullglob
stopped=0
# Gateway first, so that callers get a clean refusal rather than 503s from half a platform.
for pidfile in "$STACK_DIR"/gateway.pid "$STACK_DIR"/*.pid; do
  [ -f "$pidfile" ] || continue
  name="$(basename "$pidfile" .pid)"
  if stack_stop "$name"; then stopped=$((stopped + 1)); fi
done
echo "stack: stopped $stopped process(es)"

if $all; then
  bash tools/infra/down.sh
fi
