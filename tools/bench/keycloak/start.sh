#!/usr/bin/env bash
# Starts Keycloak (the peer of `npx nx run bench:run` when KEYCLOAK_URL is set) from Maven Central's
# keycloak-quarkus-dist zip on the machine's Java 17, in dev mode, on loopback. Idempotent: the zip
# is fetched and unpacked once (under .infra/keycloak), and a running instance is left as it is.
# Prints KEYCLOAK_URL=... once Keycloak answers. Stop with tools/bench/keycloak/stop.sh.
set -euo pipefail
cd "$(dirname "$0")/../../.."
VERSION="${KEYCLOAK_VERSION:-26.4.5}"
PORT="${KEYCLOAK_PORT:-8180}"
DIR=".infra/keycloak"
HOME_DIR="$DIR/keycloak-$VERSION"
mkdir -p "$DIR"

if [ -f "$DIR/keycloak.pid" ] && kill -0 "$(cat "$DIR/keycloak.pid")" 2>/dev/null; then
  echo "KEYCLOAK_URL=http://127.0.0.1:$PORT"
  exit 0
fi

if [ ! -x "$HOME_DIR/bin/kc.sh" ]; then
  zip="$HOME/.m2/repository/org/keycloak/keycloak-quarkus-dist/$VERSION/keycloak-quarkus-dist-$VERSION.zip"
  if [ ! -f "$zip" ]; then
    echo "keycloak: fetching org.keycloak:keycloak-quarkus-dist:$VERSION:zip from Maven Central" >&2
    mvn -q dependency:get -Dartifact="org.keycloak:keycloak-quarkus-dist:$VERSION:zip" -Dtransitive=false >&2
  fi
  unzip -q -o "$zip" -d "$DIR"
fi

# Dev mode: in-memory H2, HTTP on loopback, the admin user from the bootstrap variables.
KC_BOOTSTRAP_ADMIN_USERNAME=admin KC_BOOTSTRAP_ADMIN_PASSWORD=admin \
  JAVA_OPTS_KC_HEAP="${KEYCLOAK_HEAP:--Xms256m -Xmx1g}" \
  setsid nohup "$HOME_DIR/bin/kc.sh" start-dev --http-port "$PORT" --http-host 127.0.0.1 \
  >"$DIR/keycloak.log" 2>&1 </dev/null &
echo $! >"$DIR/keycloak.pid"

for _ in $(seq 1 180); do
  if curl -sf -o /dev/null "http://127.0.0.1:$PORT/realms/master"; then
    echo "KEYCLOAK_URL=http://127.0.0.1:$PORT"
    exit 0
  fi
  kill -0 "$(cat "$DIR/keycloak.pid")" 2>/dev/null || { tail -n 30 "$DIR/keycloak.log" >&2; echo "keycloak: exited before it answered" >&2; exit 1; }
  sleep 1
done
echo "keycloak: not answering after 180 s (log: $DIR/keycloak.log)" >&2
exit 1
