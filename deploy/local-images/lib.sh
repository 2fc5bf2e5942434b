# shellcheck shell=bash
# shellcheck disable=SC2034  # the variables are used by the scripts that source this file
# Shared by deploy/local-images/build.sh and build-apps.sh. Source it; don't run it.

LI_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$LI_DIR/../.." && pwd)"

# Same cache as tools/infra (Kafka jars live in $INVOICING_CACHE_DIR/kafka-<version>).
INVOICING_CACHE_DIR="${INVOICING_CACHE_DIR:-${HOME:-/root}/.cache/invoicing}"
LI_CACHE="$INVOICING_CACHE_DIR/local-images"
LI_DOWNLOADS="$LI_CACHE/downloads"

# crun's setrlimit is refused in some sandboxes: runc works everywhere podman does.
PODMAN_RUNTIME="${PODMAN_RUNTIME:-runc}"

# Every image made here carries these labels (list them: podman images --filter label=invoicing.local-image).
LI_LABEL=invoicing.local-image
LI_RECIPE_LABEL=invoicing.local-image.recipe

# The prefix of every line; the scripts that build on this file (tools/compose, deploy/kube-play) set their own.
LI_TAG="${LI_TAG:-local-images}"
li_log() { printf '[%s] %s\n' "$LI_TAG" "$*" >&2; }
li_die() {
  printf '[%s] ERROR: %s\n' "$LI_TAG" "$*" >&2
  exit 1
}

pm() { podman --runtime "$PODMAN_RUNTIME" "$@"; }

# Rootful podman raises RLIMIT_NOFILE and RLIMIT_NPROC of every container (RUN steps of a build
# included) to 1048576 / 4194304; sandboxes such as this machine refuse that ("error setting rlimit
# type 7/6: operation not permitted"), with crun and runc alike. A containers.conf of our own keeps
# them within the host's hard limits (nproc at most 32768: larger values are refused here even below
# the hard limit) and names the runtime, for podman, buildah and podman-compose alike. A
# CONTAINERS_CONF set by the caller wins. Use it by hand with:
#   export CONTAINERS_CONF=~/.cache/invoicing/local-images/containers.conf
li_containers_conf() {
  if [ -n "${CONTAINERS_CONF:-}" ]; then
    return 0
  fi
  local conf="$LI_CACHE/containers.conf" nofile nproc
  nofile="$(ulimit -Hn)"
  [ "$nofile" = unlimited ] && nofile=1048576
  nproc="$(ulimit -Hu)"
  if [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ]; then nproc=32768; fi
  mkdir -p "$LI_CACHE"
  cat >"$conf.tmp" <<CONF
# Written by deploy/local-images/lib.sh: podman's own defaults, except two rlimits and the runtime.
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]

[engine]
runtime = "$PODMAN_RUNTIME"
# No journald or syslog in such sandboxes: podman's events go to a file.
events_logger = "file"
CONF
  mv "$conf.tmp" "$conf"
  export CONTAINERS_CONF="$conf"
}

li_require_podman() {
  command -v podman >/dev/null 2>&1 ||
    li_die "podman is not installed: apt-get install -y podman runc podman-compose buildah debootstrap (or run: bash tools/setup.sh --containers)"
  command -v "$PODMAN_RUNTIME" >/dev/null 2>&1 ||
    li_die "OCI runtime '$PODMAN_RUNTIME' is not installed (apt-get install -y runc, or set PODMAN_RUNTIME)"
  li_containers_conf
}

li_image_exists() { podman image exists "$1" 2>/dev/null; }

# li_image_label IMAGE LABEL: the label's value, empty when absent.
li_image_label() {
  podman image inspect --format "{{ index .Labels \"$2\" }}" "$1" 2>/dev/null | sed 's/^<no value>$//'
}

li_image_id() { podman image inspect --format '{{.Id}}' "$1" 2>/dev/null; }

# Size as podman reports it (uncompressed, all layers), e.g. "214 MB".
li_image_size() {
  # sed reads the whole list (an image has several names): `head` would exit first and podman's
  # SIGPIPE, under pipefail, would fail the caller at random.
  podman image ls --format '{{.Size}}' --filter "reference=$1" 2>/dev/null | sed -n 1p
}
li_image_bytes() { podman image inspect --format '{{.Size}}' "$1" 2>/dev/null; }

# li_hash FILE_OR_DIR... [-- STRING...]: a short digest of files (content and relative name) and strings.
li_hash() {
  local f
  {
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do
      if [ -d "$1" ]; then
        (cd "$1" && find . -type f | LC_ALL=C sort | while read -r f; do
          printf '%s %s\n' "$f" "$(sha256sum <"$f" | cut -c1-64)"
        done)
      else
        printf '%s %s\n' "$(basename "$1")" "$(sha256sum <"$1" | cut -c1-64)"
      fi
      shift
    done
    [ "${1:-}" = "--" ] && shift
    printf '%s\n' "$@"
  } | sha256sum | cut -c1-16
}

li_elapsed() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
