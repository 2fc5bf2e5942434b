#!/usr/bin/env bash
# Runs the Kubernetes dev overlay with `podman kube play`, checks it, and removes it:
#
#   bash deploy/kube-play/play.sh [--keep]      (--keep: leave it running; remove with `play.sh down`)
#   bash deploy/kube-play/play.sh down
#
# 1. `kubectl kustomize deploy/k8s/overlays/dev`, turned by render.cjs into what kube play runs
#    (Deployments and ConfigMaps as they are, Secrets as podman secrets, Jobs as Pods, Services as
#    host aliases, the Ingress's routes as a gateway pod: compose's nginx image with the configuration
#    libs/gateway renders for this network; see render.cjs) on a network of its own;
# 2. Postgres, Redis and Kafka pods (infra.yaml), then the Jobs: postgres-bootstrap-job (roles and
#    passwords), the seven migrations and kafka-topic-job, each of which must exit 0;
# 3. the eight Deployments, each until its own readinessProbe (path and port read from the
#    manifest) answers 200, then the gateway;
# 4. checks: each Deployment's container and the gateway's run as uid 1000 with a read-only root file
#    system and no capability; a key made with the auth pod's `create-key` exchanges for a token
#    through the gateway, and that token lists every resource of the platform manifest
#    through it; an unknown path is the gateway's own 404 problem+json, with an X-Request-Id.
# Needs the images of deploy/local-images (tools/compose/up.sh or build.sh + build-apps.sh).
set -euo pipefail
LI_TAG=kube-play
# shellcheck source=deploy/local-images/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../local-images" && pwd)/lib.sh"

NET=invoicing-kube
SUBNET=10.89.77
OUT="$REPO_ROOT/tmp/kube-play"
KP_DIR="$REPO_ROOT/deploy/kube-play"

# Pods of the plan (a Deployment's pod is <name>-pod-0), the network and the secrets; then checks
# that none is left.
down() {
  local kind name pods=()
  if [ -f "$OUT/plan.tsv" ]; then
    while IFS=$'\t' read -r kind name _; do
      if [ "$kind" = deployment ]; then pods+=("$name-pod-0"); else pods+=("$name"); fi
    done <"$OUT/plan.tsv"
  fi
  local volumes=()
  for pod in "${pods[@]}"; do
    podman pod exists "$pod" || continue
    # emptyDir volumes are anonymous volumes of the pod's containers: remove them with the pod.
    mapfile -t -O "${#volumes[@]}" volumes < <(podman ps -a -q --filter "pod=$pod" |
      xargs -r podman inspect --format '{{range .Mounts}}{{if eq .Type "volume"}}{{println .Name}}{{end}}{{end}}' | sed '/^$/d')
    # It says so when it cannot remove a volume still used by another pod's container: the volumes
    # are removed, and checked, below.
    podman pod rm -f -t 5 "$pod" >/dev/null 2>&1 || true
  done
  for volume in "${volumes[@]}"; do
    if podman volume exists "$volume"; then podman volume rm -f "$volume" >/dev/null; fi
  done
  if [ -d "$OUT/secrets" ]; then
    for file in "$OUT"/secrets/*.json; do
      name="$(basename "$file" .json)"
      if podman secret inspect "$name" >/dev/null 2>&1; then podman secret rm "$name" >/dev/null; fi
    done
  fi
  if podman network exists "$NET"; then podman network rm -f "$NET" >/dev/null; fi
  local left=""
  for pod in "${pods[@]}"; do if podman pod exists "$pod"; then left+=" pod:$pod"; fi; done
  if podman network exists "$NET"; then left+=" network:$NET"; fi
  for volume in "${volumes[@]}"; do if podman volume exists "$volume"; then left+=" volume:$volume"; fi; done
  [ -z "$left" ] || li_die "left behind:$left"
  li_log "down: no pod, volume, secret or network of the dev overlay is left"
}

li_require_podman
command -v kubectl >/dev/null 2>&1 || li_die "kubectl is needed to render the overlay (bash tools/setup.sh)"
if [ "${1:-}" = down ]; then
  down
  exit 0
fi
keep=0
[ "${1:-}" = --keep ] && keep=1
# The gateway pod runs the image of docker-compose.yml's gateway (nginx; its stand-in: build.sh nginx).
gateway_image="$(node -e 'console.log(require("yaml").parse(require("fs").readFileSync(process.argv[1], "utf8")).services.gateway.image)' "$REPO_ROOT/docker-compose.yml")"
for image in invoicing/auth-service:dev "$gateway_image" postgres:16 redis:7 apache/kafka:4.3.1; do
  li_image_exists "$image" || li_die "$image is missing: bash deploy/local-images/build.sh && bash deploy/local-images/build-apps.sh"
done

t0=$SECONDS
down 2>/dev/null || true
rm -rf "$OUT" && mkdir -p "$OUT/logs"
kubectl kustomize "$REPO_ROOT/deploy/k8s/overlays/dev" >"$OUT/dev.yaml" 2>"$OUT/logs/kustomize.log"
node "$KP_DIR/render.cjs" "$OUT/dev.yaml" "$OUT" "$SUBNET" 2>"$OUT/render.txt" || { cat "$OUT/render.txt" >&2; exit 1; }
li_log "$(cat "$OUT/render.txt")"
[ "$keep" = 1 ] || trap down EXIT

podman network create --subnet "$SUBNET.0/24" "$NET" >/dev/null
for file in "$OUT"/secrets/*.json; do podman secret create "$(basename "$file" .json)" "$file" >/dev/null; done

# play KIND NAME IP FILE: one pod (a Deployment's pod is NAME-pod-0), at IP when given.
play() {
  local ip=()
  [ "$3" = - ] || ip=(--ip "$3")
  podman kube play --network "$NET" "${ip[@]}" "$4" >>"$OUT/logs/play.log" 2>&1 ||
    { tail -n 20 "$OUT/logs/play.log" >&2; li_die "kube play $2 failed"; }
}
# The pod's one app container (kube play names it <pod>-<container>).
container_of() { podman ps -a --filter "pod=$1" --format '{{.Names}} {{.IsInfra}}' | awk '$2 == "false" && !found { print $1; found = 1 }'; }

# until SECONDS DESCRIPTION COMMAND...: retries COMMAND every second.
until_ok() {
  local limit=$1 what=$2 start=$SECONDS
  shift 2
  until "$@" >/dev/null 2>&1; do
    [ $((SECONDS - start)) -lt "$limit" ] || li_die "$what: not within $limit s"
    sleep 1
  done
  li_log "$what after $((SECONDS - start)) s"
}

while IFS=$'\t' read -r kind name ip file _; do
  if [ "$kind" = infra ]; then play "$kind" "$name" "$ip" "$file"; fi
done <"$OUT/plan.tsv"
until_ok 120 "postgres: ready" podman exec postgres-postgres pg_isready -h 127.0.0.1 -U postgres
until_ok 60 "redis: ready" podman exec redis-redis redis-cli ping
until_ok 180 "kafka: ready" podman exec kafka-kafka /opt/kafka/bin/kafka-broker-api-versions.sh --bootstrap-server localhost:9092

# Jobs: the bootstrap alone first (the migrations log in with the roles it creates), then the rest at once.
run_jobs() {
  local name status
  for name in "$@"; do play job "$name" - "$OUT/pods/$name.yaml"; done
  for name in "$@"; do
    status="$(timeout 300 podman wait "$(container_of "$name")" || echo timeout)"
    podman logs "$(container_of "$name")" >"$OUT/logs/$name.log" 2>&1 || true
    [ "$status" = 0 ] || { tail -n 30 "$OUT/logs/$name.log" >&2; li_die "Job $name: exit status $status"; }
    li_log "Job $name: completed"
  done
}
jobs_list=()
mapfile -t jobs_list < <(awk -F'\t' '$1 == "job" { print $2 }' "$OUT/plan.tsv")
run_jobs "${jobs_list[0]}"
run_jobs "${jobs_list[@]:1}"

ready() { [ "$(curl -s -o /dev/null -w '%{http_code}' -m 3 "$1")" = 200 ]; }
while IFS=$'\t' read -r kind name ip file _; do
  if [ "$kind" = deployment ] || [ "$kind" = gateway ]; then play "$kind" "$name" "$ip" "$file"; fi
done <"$OUT/plan.tsv"
while IFS=$'\t' read -r kind name ip _ path port; do
  [ "$kind" = deployment ] || [ "$kind" = gateway ] || continue
  until_ok 240 "$name: readinessProbe $path on port $port answers 200" ready "http://$ip:$port$path"
done <"$OUT/plan.tsv"

failed=0
check() {
  if [ "$2" = "$3" ]; then li_log "ok: $1"; else
    li_log "FAIL: $1: expected '$3', got '$2'"
    failed=1
  fi
}
while IFS=$'\t' read -r kind name _; do
  case "$kind" in
    deployment) c="$(container_of "$name-pod-0")" ;;
    gateway) c="$(container_of "$name")" ;;
    *) continue ;;
  esac
  check "$name runs as uid 1000" "$(podman exec "$c" id -u)" 1000
  check "$name has a read-only root file system" "$(podman inspect --format '{{.HostConfig.ReadonlyRootfs}}' "$c")" true
  check "$name has no capability" "$(podman exec "$c" awk '/^CapEff/ { print $2 }' /proc/1/status)" 0000000000000000
done <"$OUT/plan.tsv"

gateway="http://$SUBNET.40:8080"
# Every resource of the platform manifest (libs/contracts/src/manifest.ts).
resources="$(node "$REPO_ROOT/tools/manifest/read-manifest.mjs" resources)"
scopes="$(printf 'read:%s,' $resources)"; scopes="${scopes%,}"
key="$(podman exec "$(container_of auth-service-pod-0)" node dist/main.js create-key --organization-name 'Kube Play Ltd' --name smoke --scopes "$scopes")"
body="$(node -e 'const k = JSON.parse(process.argv[1]); console.log(JSON.stringify({ grant_type: "client_credentials", client_id: k.client_id, client_secret: k.client_secret }))' "$key")"
token_response="$(curl -s -m 10 -H 'content-type: application/json' -d "$body" "$gateway/api/v1/auth/token")"
token="$(node -e 'const r = JSON.parse(process.argv[1]); if (r.token_type === "Bearer" && r.access_token) console.log(r.access_token)' "$token_response" || true)"
check "a token exchange through the gateway answers a Bearer token" "$([ -n "$token" ] && echo yes)" yes
for resource in $resources; do
  check "GET /api/v1/$resource through the gateway with that token" \
    "$(curl -s -o /dev/null -w '%{http_code}' -m 10 -H "authorization: Bearer $token" "$gateway/api/v1/$resource")" 200
done
check "no token: 401 through the gateway" "$(curl -s -o /dev/null -w '%{http_code}' -m 10 "$gateway/api/v1/invoices")" 401
check "an unknown path: the gateway's own 404 problem+json with an X-Request-Id" \
  "$(curl -s -o /dev/null -D - -m 10 "$gateway/no/such/route" | tr -d '\r' | awk 'NR == 1 { s = $2 } tolower($1) == "content-type:" { t = $2 } tolower($1) == "x-request-id:" && $2 != "" { id = "id" } END { print s, t, id }')" \
  "404 application/problem+json id"

[ "$failed" = 0 ] || li_die "checks failed (logs: podman logs <pod>-<container>; $OUT)"
li_log "kube play of the dev overlay: ok in $((SECONDS - t0)) s"
