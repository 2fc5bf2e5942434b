#!/usr/bin/env bash
# Starts docker-compose.yml with podman-compose, in compose's own order, and waits until every
# service is healthy and every one-shot (topics, migrations) has succeeded; then
# http://localhost:8080 is the platform's base URL.
#
#   bash tools/compose/up.sh [--no-build] [--kafka-host-port]
#
#   --no-build         use the images as they are (default: build them first, like `up --build`;
#                      unchanged sources are served from podman's layer cache in seconds)
#   --kafka-host-port  also publish Kafka on 127.0.0.1:29092 (tools/compose/kafka-host-listener.yml),
#                      for subscribers on the host such as the end-to-end tests
#
# Images come from deploy/local-images (the stand-ins for postgres:16, redis:7, apache/kafka and the
# gateway's nginx, made without a registry, then the eight app images from the root Dockerfile). With Docker, run
# `docker compose up --build --wait` instead: it honours the depends_on conditions itself.
# Debian's podman-compose 1.0.3 only orders the starts and podman 4.3 runs no health check without
# systemd, so this script starts one wave of services at a time (tools/compose/plan.cjs) and runs
# each container's own health check with `podman healthcheck run` until it passes.
# Stop and remove everything with: bash tools/compose/down.sh
set -euo pipefail
# shellcheck source=tools/compose/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

build=1
kafka_host=0
for arg in "$@"; do
  case "$arg" in
    --no-build) build=0 ;;
    --kafka-host-port) kafka_host=1 ;;
    *) li_die "unknown argument: $arg (see the top of $0)" ;;
  esac
done
cc_require
t0=$SECONDS

if [ -n "$(podman ps -a -q --filter "label=io.podman.compose.project=$COMPOSE_PROJECT")" ]; then
  li_die "the compose stack already has containers: bash tools/compose/down.sh first"
fi
rm -f "$COMPOSE_LOGS/kafka-host-listener"
[ "$kafka_host" = 1 ] && touch "$COMPOSE_LOGS/kafka-host-listener"
# 8080 the gateway, 9094 Kafka's EXTERNAL listener (docker-compose.yml publishes both).
for port in 8080 9094 $([ "$kafka_host" = 1 ] && echo 29092); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    li_die "port $port is taken on this machine (tools/stack's gateway? bash tools/stack/stop.sh)"
  fi
done

if [ "$build" = 1 ]; then
  li_log "images: stand-ins, then the app images (logs: ~/.cache/invoicing/local-images/logs)"
  bash "$REPO_ROOT/deploy/local-images/build.sh" >"$COMPOSE_LOGS/build.log" 2>&1 || { tail -n 30 "$COMPOSE_LOGS/build.log" >&2; li_die "building the stand-ins failed"; }
  bash "$REPO_ROOT/deploy/local-images/build-apps.sh" >>"$COMPOSE_LOGS/build.log" 2>&1 || { tail -n 30 "$COMPOSE_LOGS/build.log" >&2; li_die "building the app images failed"; }
  li_log "images ready after $((SECONDS - t0)) s"
fi

files=()
mapfile -d '' files < <(cc_files)
plan="$(node "$COMPOSE_DIR/plan.cjs" --check "${files[@]}")"
for wave in $(cut -d' ' -f1 <<<"$plan" | sort -un); do
  services=()
  mapfile -t services < <(awk -v w="$wave" '$1 == w { print $2 }' <<<"$plan")
  li_log "wave $wave: ${services[*]}"
  cc_compose up -d --no-deps --no-build "${services[@]}" >>"$COMPOSE_LOGS/up.log" 2>&1 ||
    { tail -n 30 "$COMPOSE_LOGS/up.log" >&2; li_die "podman-compose up failed for: ${services[*]}"; }
  for service in "${services[@]}"; do
    case "$(awk -v s="$service" '$2 == s { print $3 }' <<<"$plan")" in
      exited) cc_wait_exited "$service" 300 ;;
      healthy) cc_wait_healthy "$service" 300 ;;
      running) [ "$(podman inspect --format '{{.State.Running}}' "$(cc_container "$service")")" = true ] || li_die "$service is not running" ;;
    esac
  done
done

li_log "up in $((SECONDS - t0)) s: http://localhost:8080"
# For the end-to-end tests against this stack (apps/platform-e2e/src/support/platform.ts):
echo "E2E_BASE_URL=http://localhost:8080"
echo "E2E_AUTH_CLI=podman exec $(cc_container auth-service) node dist/main.js"
if [ "$kafka_host" = 1 ]; then
  echo "E2E_KAFKA_BROKERS=127.0.0.1:29092"
  echo "E2E_KAFKA_CTL=bash $COMPOSE_DIR/kafka.sh"
fi
