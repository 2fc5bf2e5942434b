#!/usr/bin/env bash
# Lists what tools/stack/start.sh started: every instance of every service and the gateway, each with
# its port, its pid and its state (ready: /health/ready answers 200; running: alive, not ready;
# stopped). Exit 0 when every one is ready, 1 when one is not, 3 when the stack was never started.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
STACK_DIR="${INVOICING_STATE_DIR:-$ROOT/.infra}/stack"
LOG_DIR="$STACK_DIR/logs"

# shellcheck source=tools/stack/lib.sh
source tools/stack/lib.sh

PROCESSES="$STACK_DIR/processes"
[ -s "$PROCESSES" ] || { echo "stack: not started (no ${PROCESSES#"$ROOT"/}; bash tools/stack/start.sh)"; exit 3; }

status=0
printf '%-20s %-6s %-8s %s\n' PROCESS PORT PID STATE
while read -r process port; do
  pid=-
  if stack_running "$process"; then
    pid="$(cat "$STACK_DIR/$process.pid")"
    if curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$port/health/ready" 2>/dev/null; then
      state=ready
    else
      state="running, not ready (log: ${LOG_DIR#"$ROOT"/}/$process.log)"
      status=1
    fi
  else
    state=stopped
    status=1
  fi
  printf '%-20s %-6s %-8s %s\n' "$process" "$port" "$pid" "$state"
done <"$PROCESSES"
exit "$status"
