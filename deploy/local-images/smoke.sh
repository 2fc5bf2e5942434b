#!/usr/bin/env bash
# Checks the stand-ins made by build.sh against what docker-compose.yml asks of them, service by
# service, with the exact environment, command, bind mounts and health check compose gives them
# (read from docker-compose.yml by compose-service.cjs), on a private podman network where each
# container is reachable by its compose service name. No host port is published.
#
#   bash deploy/local-images/smoke.sh [node|postgres|redis|kafka ...]     (default: all four)
#
#   node      node --version / npm --version / user node is uid 1000
#   postgres  healthy (compose's pg_isready over TCP, which waits for the bootstrap init script), the
#             server runs as uid 999, and another container logs in over the network as auth_app
#             with its development password (the roles of tools/infra/postgres/bootstrap.sql)
#   redis     healthy (redis-cli ping), and answers another container (protected mode is off)
#   kafka     healthy (kafka-broker-api-versions.sh), compose's kafka-topics one-shot succeeds, and
#             the topics have 6 partitions
# Containers are removed at the end, whatever happens.
set -euo pipefail
# shellcheck source=deploy/local-images/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(node postgres redis kafka)
li_require_podman
command -v node >/dev/null 2>&1 || li_die "node is needed to read docker-compose.yml"

net=invoicing-local-images-smoke
prefix=li-smoke
svc_json() { node "$LI_DIR/compose-service.cjs" "$@"; }

cleanup() {
  local c
  for c in $(podman ps -a --format '{{.Names}}' | grep "^$prefix-" || true); do
    podman rm -f -v -t 2 "$c" >/dev/null 2>&1 || true
  done
  podman network rm -f "$net" >/dev/null 2>&1 || true
}
trap cleanup EXIT
cleanup
podman network create "$net" >/dev/null

results=()
failed=0
pass() { results+=("ok    $1: $2"); li_log "ok: $1: $2"; }
fail() {
  results+=("FAIL  $1: $2")
  li_log "FAIL: $1: $2"
  failed=1
}

# start SERVICE: a detached container with compose's settings, reachable as SERVICE.
start() {
  local args=()
  mapfile -d '' args < <(svc_json run-args "$1")
  pm run -d --name "$prefix-$1" --network "$net" --network-alias "$1" "${args[@]}" >/dev/null
}

# wait_healthy SERVICE TIMEOUT: runs compose's health check test in the container until it passes.
wait_healthy() {
  local health=() t0=$SECONDS
  mapfile -d '' health < <(svc_json health "$1")
  while [ $((SECONDS - t0)) -lt "$2" ]; do
    if timeout 15 podman exec "$prefix-$1" "${health[@]}" >/dev/null 2>&1; then
      waited=$((SECONDS - t0))
      return 0
    fi
    if [ "$(podman inspect --format '{{.State.Running}}' "$prefix-$1" 2>/dev/null)" != true ]; then
      podman logs --tail 40 "$prefix-$1" >&2 || true
      return 1
    fi
    sleep 1
  done
  podman logs --tail 40 "$prefix-$1" >&2 || true
  return 1
}

pid1_uid() { podman exec "$prefix-$1" awk '/^Uid:/ { print $2 }' /proc/1/status 2>/dev/null || true; }

image_of() { svc_json image "$1" | tr -d '\0'; }

for t in "${targets[@]}"; do
  case "$t" in
    node)
      img="$(sed -n 's/^ARG NODE_IMAGE=//p' "$REPO_ROOT/Dockerfile" | head -n 1)"
      out="$(pm run --rm --network none "$img" sh -c 'node --version; npm --version; id node' 2>&1 || true)"
      if [[ "$out" == v20.*uid=1000\(node\)\ gid=1000\(node\)* ]]; then pass node "$(echo "$out" | head -n 2 | tr '\n' ' ')(npm), user node uid 1000"; else fail node "$out"; fi
      ;;
    postgres)
      start postgres
      if wait_healthy postgres 120; then
        pass postgres "healthy after ${waited}s (init script ran: pg_isready over TCP)"
        uid="$(pid1_uid postgres)"
        if [ "$uid" = 999 ]; then pass postgres "server runs as uid 999"; else fail postgres "server uid '$uid'"; fi
        out="$(pm run --rm --network "$net" -e PGPASSWORD=auth_app_dev "$(image_of postgres)" \
          psql -h postgres -U auth_app -d invoicing -XAtc 'select current_user || chr(32) || version()' 2>&1 || true)"
        if [[ "$out" == auth_app\ PostgreSQL* ]]; then pass postgres "auth_app logs in from another container: ${out%% on *}"; else fail postgres "login as auth_app: $out"; fi
        podman restart -t 10 "$prefix-postgres" >/dev/null
        if wait_healthy postgres 60 && [[ "$(podman logs "$prefix-postgres" 2>&1)" == *"skipping initialisation"* ]]; then
          pass postgres "restart keeps the data (no second initialisation), healthy after ${waited}s"
        else
          fail postgres "restart"
        fi
      else
        fail postgres "not healthy within 120 s"
      fi
      ;;
    redis)
      start redis
      if wait_healthy redis 60; then
        pass redis "healthy after ${waited}s"
        uid="$(pid1_uid redis)"
        if [ "$uid" = 999 ]; then pass redis "server runs as uid 999"; else fail redis "server uid '$uid'"; fi
        out="$(pm run --rm --network "$net" "$(image_of redis)" redis-cli -h redis ping 2>&1 || true)"
        if [ "$out" = PONG ]; then pass redis "answers another container (PONG)"; else fail redis "from another container: $out"; fi
      else
        fail redis "not healthy within 60 s"
      fi
      ;;
    kafka)
      start kafka
      if wait_healthy kafka 180; then
        pass kafka "healthy after ${waited}s (kafka-broker-api-versions.sh)"
        uid="$(pid1_uid kafka)"
        if [ "$uid" = 1000 ]; then pass kafka "broker runs as uid 1000 (appuser)"; else fail kafka "broker uid '$uid'"; fi
        props="$(podman exec "$prefix-kafka" cat /opt/kafka/config/server.properties 2>&1 || true)"
        if grep -qx 'auto.create.topics.enable=false' <<<"$props" && grep -qx 'advertised.listeners=PLAINTEXT://kafka:9092' <<<"$props" &&
          grep -qx 'controller.quorum.voters=1@kafka:9093' <<<"$props"; then
          pass kafka "server.properties from compose's KAFKA_* variables ($(grep -c = <<<"$props") properties)"
        else
          fail kafka "server.properties: $props"
        fi
        args=()
        mapfile -d '' args < <(svc_json run-args kafka-topics)
        t0=$SECONDS
        if out="$(pm run --rm --name "$prefix-kafka-topics" --network "$net" "${args[@]}" 2>&1)"; then
          pass kafka-topics "compose's one-shot created the topics in $((SECONDS - t0))s"
        else
          fail kafka-topics "$out"
        fi
        out="$(pm run --rm --network "$net" --entrypoint /opt/kafka/bin/kafka-topics.sh "$(image_of kafka)" \
          --bootstrap-server kafka:9092 --describe --topic auth.revocations.v1 2>&1 || true)"
        if grep -q 'PartitionCount: 6' <<<"$out" && grep -q 'retention.ms=7200000' <<<"$out"; then
          pass kafka "auth.revocations.v1: 6 partitions, retention.ms=7200000"
        else
          fail kafka "describe: $out"
        fi
      else
        fail kafka "not healthy within 180 s"
      fi
      ;;
    *) li_die "unknown stand-in: $t (node, postgres, redis, kafka)" ;;
  esac
done

echo
printf '%s\n' "${results[@]}"
echo "smoke: $([ "$failed" -eq 0 ] && echo ok || echo FAILED)"
exit "$failed"
