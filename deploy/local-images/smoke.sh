#!/usr/bin/env bash
# Checks the stand-ins made by build.sh against what docker-compose.yml asks of them, service by
# service, with the exact environment, command, bind mounts and health check compose gives them
# (read from docker-compose.yml by compose-service.cjs), on a private podman network where each
# container is reachable by its compose service name. No host port is published.
#
#   bash deploy/local-images/smoke.sh [node|postgres|redis|kafka|nginx ...]     (default: all five)
#
#   node      node --version / npm --version / user node is uid 1000
#   postgres  healthy (compose's pg_isready over TCP, which waits for the bootstrap init script), the
#             server runs as uid 999, and another container logs in over the network as auth_app
#             with its development password (the roles of deploy/k8s/base/platform/postgres/bootstrap.sql)
#   redis     healthy (redis-cli ping), and answers another container (protected mode is off)
#   kafka     healthy (kafka-broker-api-versions.sh), compose's kafka-topics one-shot succeeds, and
#             the topics have 6 partitions
#   nginx     compose's gateway (its hardening, user 1000:1000, entry point and the mounted
#             deploy/compose/gateway.nginx.conf) turns healthy, every nginx process runs as uid 1000,
#             and from another container: a route reaches its upstream (a node stand-in answering as
#             auth-service) with X-Request-Id kept, X-Forwarded-For replaced and traceparent continued;
#             a service that is not there is a 503 problem+json, an unknown path a 404 one; the
#             stub_status listener is not reachable from outside
# Containers are removed at the end, whatever happens.
set -euo pipefail
# shellcheck source=deploy/local-images/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(node postgres redis kafka nginx)
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

# start SERVICE [PODMAN-OPTION...]: a detached container with compose's settings, reachable as SERVICE.
start() {
  local args=() service="$1"
  shift
  mapfile -d '' args < <(svc_json run-args "$service")
  pm run -d --name "$prefix-$service" --network "$net" --network-alias "$service" "$@" "${args[@]}" >/dev/null
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
        if grep -qx 'auto.create.topics.enable=false' <<<"$props" && grep -qx 'advertised.listeners=PLAINTEXT://kafka:9092,EXTERNAL://localhost:9094' <<<"$props" &&
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
    nginx)
      # The configuration compose mounts (deploy/tests keeps it equal to libs/gateway's render); its
      # upstreams are compose service names. One of them is answered by a node container that echoes
      # what it received; the others point at the gateway's own loopback, where nothing listens.
      conf="$REPO_ROOT/deploy/compose/gateway.nginx.conf"
      node_image="$(sed -n 's/^ARG NODE_IMAGE=//p' "$REPO_ROOT/Dockerfile" | head -n 1)"
      mapfile -t upstreams < <(sed -n 's/^ *server \([a-z0-9-]*\):\([0-9]*\) .*/\1 \2/p' "$conf")
      read -r echo_name echo_port <<<"${upstreams[0]}"
      hosts=()
      for u in "${upstreams[@]:1}"; do hosts+=(--add-host "${u%% *}:127.0.0.1"); done
      pm run -d --name "$prefix-$echo_name" --network "$net" --network-alias "$echo_name" --user 1000:1000 "$node_image" \
        node -e 'require("node:http").createServer((q, s) => { s.setHeader("content-type", "application/json"); s.setHeader("x-request-id", "from-upstream"); s.end(JSON.stringify({ url: q.url, headers: q.headers })); }).listen(Number(process.argv[1]))' "$echo_port" >/dev/null
      start gateway "${hosts[@]}"
      if wait_healthy gateway 60; then
        pass nginx "compose's gateway healthy after ${waited}s (read-only root, tmpfs /tmp, no capability, user 1000:1000)"
        uids="$(podman exec "$prefix-gateway" sh -c 'for p in /proc/[0-9]*; do [ "$(cat "$p/comm" 2>/dev/null)" = nginx ] && awk "/^Uid:/ { print \$2 }" "$p/status"; done' 2>/dev/null | sort | uniq -c | xargs)"
        if [[ "$uids" =~ ^[2-9]\ 1000$ ]]; then pass nginx "master and workers run as uid 1000 ($uids)"; else fail nginx "nginx process uids: '$uids'"; fi
        ask() { pm run --rm --network "$net" --entrypoint curl "$(image_of gateway)" -s -i -m 10 "$@" 2>&1; }
        trace=0af7651916cd43dd8448eb211c80319c
        out="$(ask -H "x-request-id: smoke-1" -H "x-forwarded-for: 203.0.113.9" -H "traceparent: 00-$trace-b7ad6b7169203331-01" \
          "http://gateway:8080/api/v1/auth/token?x=1" || true)"
        got="$(node -e '
          const [text, trace] = process.argv.slice(1);
          const body = JSON.parse(text.slice(text.lastIndexOf("\n{") + 1));
          const h = body.headers;
          const ok = /^HTTP\/1\.1 200/.test(text) && /\r\nx-request-id: smoke-1\r\n/i.test(text) && !/from-upstream/.test(text.split("\r\n\r\n")[0]) &&
            body.url === "/api/v1/auth/token?x=1" && h["x-request-id"] === "smoke-1" && !h["x-forwarded-for"].includes("203.0.113.9") &&
            new RegExp("^00-" + trace + "-(?!b7ad6b7169203331)[0-9a-f]{16}-01$").test(h.traceparent);
          console.log(ok ? "ok " + h["x-forwarded-for"] + " " + h.traceparent : "bad");' "$out" "$trace" 2>/dev/null || echo bad)"
        if [[ "$got" == ok* ]]; then
          read -r _ xff tp <<<"$got"
          pass nginx "a route reaches $echo_name: 200, X-Request-Id kept, X-Forwarded-For $xff (the caller's replaced), traceparent $tp (trace kept, new parent)"
        else
          fail nginx "through the gateway to $echo_name: $out"
        fi
        read -r other_name _ <<<"${upstreams[1]}"
        # A prefix of that service: the `location = PREFIX` block that proxies to its upstream.
        path="$(awk -v up="http://service_${other_name//-/_};" '$1 == "location" { loc = ($2 == "=") ? $3 : "" } $1 == "proxy_pass" && $2 == up && loc != "" { print loc; exit }' "$conf")"
        out="$(ask "http://gateway:8080$path" || true)"
        if [[ "$out" == *"HTTP/1.1 503"*"application/problem+json"*'"status":503'* ]]; then pass nginx "$path ($other_name not there): 503 problem+json"; else fail nginx "$path: $out"; fi
        out="$(ask "http://gateway:8080/no/such/route" || true)"
        if [[ "$out" == *"HTTP/1.1 404"*"application/problem+json"*'"status":404'* ]]; then pass nginx "an unknown path: 404 problem+json"; else fail nginx "unknown path: $out"; fi
        out="$(ask -o /dev/null -w '%{http_code}' "http://gateway:9080/stub_status" || true)"
        inside="$(podman exec "$prefix-gateway" curl -s -m 5 http://127.0.0.1:9080/stub_status 2>&1 || true)"
        if [[ "$out" == *000 ]] && [[ "$inside" == "Active connections:"* ]]; then
          pass nginx "stub_status answers on the container's loopback only"
        else
          fail nginx "stub_status: from outside '$out', inside '$inside'"
        fi
      else
        fail nginx "compose's gateway not healthy within 60 s"
      fi
      ;;
    *) li_die "unknown stand-in: $t (node, postgres, redis, kafka, nginx)" ;;
  esac
done

echo
printf '%s\n' "${results[@]}"
echo "smoke: $([ "$failed" -eq 0 ] && echo ok || echo FAILED)"
exit "$failed"
