#!/usr/bin/env bash
# Stops the Keycloak started by tools/bench/keycloak/start.sh (and its Java child).
set -euo pipefail
cd "$(dirname "$0")/../../.."
pidfile=".infra/keycloak/keycloak.pid"
[ -f "$pidfile" ] || { echo "keycloak: not running"; exit 0; }
pid="$(cat "$pidfile")"
# kc.sh runs java as a child in the same session (setsid): stop the whole session.
kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
kill -KILL -- "-$pid" 2>/dev/null || true
rm -f "$pidfile"
echo "keycloak: stopped"
