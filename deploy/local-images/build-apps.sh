#!/usr/bin/env bash
# Builds the platform's own images from the root Dockerfile with podman, under the names
# docker-compose.yml gives them (invoicing/<app>:dev), one per app, then checks each one:
#   - the image's User is numeric and not root, and `id` in a container says uid 1000;
#   - it keeps its HEALTHCHECK (podman keeps it in the docker image format only);
#   - the app itself starts: `<image> env-spec` prints the variables it reads (no network, no ports).
# and prints a table: app, size, build time, user, checks.
#
#   bash deploy/local-images/build-apps.sh [--no-cache] [APP ...]     (default: every app of compose)
#
# The Dockerfile's FROM (node:20-bookworm-slim) must exist locally: bash deploy/local-images/build.sh node
# (nothing is pulled). A rebuild with unchanged sources is served from podman's layer cache.
# Environment: PODMAN_RUNTIME (runc), TAG (dev).
set -euo pipefail
# shellcheck source=deploy/local-images/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

TAG="${TAG:-dev}"
no_cache=()
wanted=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-cache) no_cache=(--no-cache) ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
      exit 64
      ;;
    -*)
      echo "unknown option: $1" >&2
      exit 64
      ;;
    *) wanted+=("$1") ;;
  esac
  shift
done

li_require_podman

# APP and PORT pairs, as docker-compose.yml builds them (the Dockerfile's two build arguments).
declare -A port_of
order=()
while read -r app port; do
  port_of[$app]="$port"
  order+=("$app")
done < <(awk '$1 == "APP:" { app = $2 } $1 == "PORT:" { gsub(/"/, "", $2); if (app != "" && !seen[app]++) print app, $2; app = "" }' \
  "$REPO_ROOT/docker-compose.yml")
[ ${#order[@]} -gt 0 ] || li_die "no APP/PORT build arguments found in docker-compose.yml"
if [ ${#wanted[@]} -gt 0 ]; then
  for app in "${wanted[@]}"; do
    [ -n "${port_of[$app]:-}" ] || li_die "$app is not an app of docker-compose.yml (${order[*]})"
  done
  order=("${wanted[@]}")
fi

node_image="$(sed -n 's/^ARG NODE_IMAGE=//p' "$REPO_ROOT/Dockerfile" | head -n 1)"
li_image_exists "$node_image" ||
  li_die "$node_image is not in local storage: bash deploy/local-images/build.sh node (or podman pull it where a registry is reachable)"

mkdir -p "$LI_CACHE/logs"
rows=()
failed=0
started=$SECONDS
for app in "${order[@]}"; do
  port="${port_of[$app]}"
  image="invoicing/$app:$TAG"
  log="$LI_CACHE/logs/build-$app.log"
  li_log "building $image (APP=$app PORT=$port; log: $log)"
  t0=$SECONDS
  if ! pm build --pull=never --format docker --layers --jobs 2 "${no_cache[@]}" \
    --build-arg "APP=$app" --build-arg "PORT=$port" \
    -f "$REPO_ROOT/Dockerfile" -t "$image" "$REPO_ROOT" >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    rows+=("$(printf '%-16s %-10s %-9s %-11s %s' "$app" "-" "$(li_elapsed $((SECONDS - t0)))" "-" "BUILD FAILED (log: $log)")")
    failed=1
    continue
  fi
  took=$((SECONDS - t0))
  size="$(li_image_size "localhost/$image")"
  user="$(podman image inspect --format '{{.Config.User}}' "$image")"
  checks=()
  case "$user" in
    0 | 0:* | root | root:* | "") checks+=("USER NOT NON-ROOT ($user)"); failed=1 ;;
    [1-9]*) ;;
    *) checks+=("user '$user' is not numeric"); failed=1 ;;
  esac
  id_out="$(pm run --rm --network none --no-healthcheck --entrypoint id "$image" 2>&1 || true)"
  if [[ "$id_out" == uid=1000\(*gid=1000\(* ]]; then checks+=("id: ${id_out%% groups=*}"); else checks+=("id FAILED: $id_out"); failed=1; fi
  hc="$(podman image inspect --format '{{if .Config.Healthcheck}}{{join .Config.Healthcheck.Test " "}}{{end}}' "$image" 2>/dev/null || true)"
  if [[ "$hc" == *"/health/live"* ]]; then checks+=("healthcheck kept"); else checks+=("NO HEALTHCHECK"); failed=1; fi
  if spec="$(pm run --rm --network none --no-healthcheck "$image" env-spec 2>/dev/null)" &&
    count="$(printf '%s' "$spec" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).length))' 2>/dev/null)"; then
    checks+=("env-spec: $count variables")
  else
    checks+=("env-spec FAILED"); failed=1
  fi
  rows+=("$(printf '%-16s %-10s %-9s %-11s %s' "$app" "$size" "$(li_elapsed "$took")" "$user" "$(joined="$(IFS=';'; echo "${checks[*]}")"; echo "${joined//;/; }")")")
  li_log "$image: $size in $(li_elapsed "$took"), user $user; ${checks[*]}"
done

echo
printf '%-16s %-10s %-9s %-11s %s\n' app size build user checks
printf '%s\n' "${rows[@]}"
echo "build-apps: $( [ "$failed" -eq 0 ] && echo ok || echo FAILED ) in $(li_elapsed $((SECONDS - started)))"
exit "$failed"
