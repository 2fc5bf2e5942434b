#!/usr/bin/env bash
# Starts Keycloak (the peer of `npx nx run bench:run` when KEYCLOAK_URL is set) from Maven Central's
# keycloak-quarkus-dist zip on the machine's Java 17, in dev mode, on loopback. Idempotent: the zip
# is fetched and unpacked once (under .infra/keycloak, git-ignored), and a Keycloak already running
# (ours, or anything answering on the port) is left as it is. Prints KEYCLOAK_URL=... on stdout once
# Keycloak answers; everything else goes to stderr. Stop with tools/bench/keycloak/stop.sh.
#
#   KEYCLOAK_VERSION (26.4.5)  KEYCLOAK_PORT (8180)  KEYCLOAK_HEAP (-Xms256m -Xmx1g)
#   KEYCLOAK_START_TIMEOUT (120 s)
set -euo pipefail
cd "$(dirname "$0")/../../.."
VERSION="${KEYCLOAK_VERSION:-26.4.5}"
PORT="${KEYCLOAK_PORT:-8180}"
TIMEOUT="${KEYCLOAK_START_TIMEOUT:-120}"
URL="http://127.0.0.1:$PORT"
DIR=".infra/keycloak"
HOME_DIR="$DIR/keycloak-$VERSION"
PIDFILE="$DIR/keycloak.pid"
LOG="$DIR/keycloak.log"
mkdir -p "$DIR"

answers() { curl -sf -o /dev/null --max-time 5 "$URL/realms/master"; }
# The pid file may outlive its process (reboot, kill -9) and the pid be reused: only a process of
# our unpacked Keycloak counts. That is kc.sh, or java in its place: when kc.sh's first java exits
# asking for a re-augmentation (dev mode does, on each start), kc.sh execs the second java.
ours_running() {
  [ -f "$PIDFILE" ] && grep -qs '\.infra/keycloak/keycloak-' "/proc/$(cat "$PIDFILE")/cmdline"
}

if ! ours_running; then
  if answers; then
    echo "keycloak: something already answers on $URL; using it" >&2
    echo "KEYCLOAK_URL=$URL"
    exit 0
  fi

  if [ ! -x "$HOME_DIR/bin/kc.sh" ]; then
    zip="$HOME/.m2/repository/org/keycloak/keycloak-quarkus-dist/$VERSION/keycloak-quarkus-dist-$VERSION.zip"
    if [ ! -f "$zip" ]; then
      echo "keycloak: fetching org.keycloak:keycloak-quarkus-dist:$VERSION:zip from Maven Central (about 160 MB)" >&2
      mvn -q dependency:get -Dartifact="org.keycloak:keycloak-quarkus-dist:$VERSION:zip" -Dtransitive=false >&2
    fi
    # Unpack beside the target and move it into place, so an interrupted unzip never looks complete.
    rm -rf "$DIR/.unpack"
    unzip -q "$zip" -d "$DIR/.unpack"
    mv "$DIR/.unpack/keycloak-$VERSION" "$HOME_DIR"
    rm -rf "$DIR/.unpack"
  fi

  # Dev mode: HTTP on loopback, the dev-file H2 database under $HOME_DIR/data (it survives restarts;
  # delete that folder for a clean slate), the admin user from the bootstrap variables on first start.
  # setsid makes kc.sh the leader of its own session, so stop.sh can stop it and its java child as
  # one group, and the shell that ran this script can exit without taking Keycloak with it. (This
  # script has no job control, so the background child is no group leader and setsid execs in
  # place: $! is kc.sh's pid.)
  echo "keycloak: starting $VERSION on $URL (log: $LOG)" >&2
  KC_BOOTSTRAP_ADMIN_USERNAME=admin KC_BOOTSTRAP_ADMIN_PASSWORD=admin \
    JAVA_OPTS_KC_HEAP="${KEYCLOAK_HEAP:--Xms256m -Xmx1g}" \
    setsid nohup "$HOME_DIR/bin/kc.sh" start-dev --http-port "$PORT" --http-host 127.0.0.1 \
    >"$LOG" 2>&1 </dev/null &
  echo $! >"$PIDFILE"
fi

# Also reached when ours was already running: it may still be starting.
for _ in $(seq 1 "$TIMEOUT"); do
  if answers; then
    echo "KEYCLOAK_URL=$URL"
    exit 0
  fi
  ours_running || { tail -n 30 "$LOG" >&2; echo "keycloak: exited before it answered (log: $LOG)" >&2; exit 1; }
  sleep 1
done
echo "keycloak: not answering after $TIMEOUT s (log: $LOG); stop it with tools/bench/keycloak/stop.sh" >&2
exit 1
