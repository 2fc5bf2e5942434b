#!/usr/bin/env bash
# Stops the Keycloak started by tools/bench/keycloak/start.sh (kc.sh and its java child, or the java
# kc.sh exec'd itself into), by the pid it recorded. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../../.."
pidfile=".infra/keycloak/keycloak.pid"
[ -f "$pidfile" ] || { echo "keycloak: not running"; exit 0; }
pid="$(cat "$pidfile")"
# A process of our unpacked Keycloak: kc.sh (relative path) or java (-Dkc.home.dir=...).
ours() { grep -qs '\.infra/keycloak/keycloak-' "/proc/$pid/cmdline"; }
# A stale pid file (reboot, kill -9) may name a reused pid: only signal ours.
if ! ours; then
  rm -f "$pidfile"
  echo "keycloak: not running (stale pid file removed)"
  exit 0
fi
# start.sh ran kc.sh under setsid, so its pid is also its process group: TERM the group (kc.sh
# forwards TERM to java anyway; the group also covers a java left behind by a dead kc.sh).
# Keycloak shuts down gracefully on TERM in a second or two.
kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
# kill -0 is not enough: an exited process stays a zombie (empty cmdline) until init reaps it.
for _ in $(seq 1 30); do ours || break; sleep 1; done
if ours; then
  echo "keycloak: still running after 30 s; killing it" >&2
  kill -KILL -- "-$pid" 2>/dev/null || true
fi
rm -f "$pidfile"
echo "keycloak: stopped"
