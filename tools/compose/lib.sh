# shellcheck shell=bash
# Shared by tools/compose/*.sh. Source it; don't run it.
LI_TAG=compose
# shellcheck source=deploy/local-images/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../../deploy/local-images" && pwd)/lib.sh"

COMPOSE_DIR="$REPO_ROOT/tools/compose"
# docker-compose.yml says `name: invoicing`; podman-compose 1.0.3 reads the project name from -p only.
COMPOSE_PROJECT=invoicing
COMPOSE_LOGS="$REPO_ROOT/tmp/compose"

# The compose files: docker-compose.yml, plus the Kafka host listener when it is in use (a marker
# file written by up.sh, so that down.sh and kafka.sh use the same files).
cc_files() {
  local files=(-f "$REPO_ROOT/docker-compose.yml")
  [ -f "$COMPOSE_LOGS/kafka-host-listener" ] && files+=(-f "$COMPOSE_DIR/kafka-host-listener.yml")
  printf '%s\0' "${files[@]}"
}

cc_compose() {
  local files=()
  mapfile -d '' files < <(cc_files)
  podman-compose -p "$COMPOSE_PROJECT" "${files[@]}" "$@"
}

# podman-compose 1.0.3 names containers <project>_<service>_1.
cc_container() { printf '%s_%s_1' "$COMPOSE_PROJECT" "$1"; }

# cc_wait_healthy SERVICE TIMEOUT: runs the container's own health check (the one podman-compose
# configured from compose's healthcheck) until it passes. Without systemd, podman 4.3 never runs
# health checks by itself, so `podman healthcheck run` is the only way to get a status.
cc_wait_healthy() {
  local name t0=$SECONDS
  name="$(cc_container "$1")"
  while [ $((SECONDS - t0)) -lt "$2" ]; do
    if [ "$(podman inspect --format '{{.State.Running}}' "$name" 2>/dev/null)" != true ]; then
      # restart: unless-stopped brings a crashed service back; give it the rest of the time.
      sleep 1
      continue
    fi
    if timeout 20 podman healthcheck run "$name" >/dev/null 2>&1; then
      li_log "$1: healthy after $((SECONDS - t0)) s"
      return 0
    fi
    sleep 1
  done
  podman logs --tail 60 "$name" >&2 || true
  li_die "$1 is not healthy after $2 s (its log is above)"
}

# cc_wait_exited SERVICE TIMEOUT: a one-shot; fails unless it exits with status 0.
cc_wait_exited() {
  local name status
  name="$(cc_container "$1")"
  status="$(timeout "$2" podman wait "$name" 2>/dev/null || echo timeout)"
  if [ "$status" != 0 ]; then
    podman logs --tail 60 "$name" >&2 || true
    li_die "$1 did not complete (exit status: $status; its log is above)"
  fi
  li_log "$1: completed"
}

cc_require() {
  li_require_podman
  command -v podman-compose >/dev/null 2>&1 ||
    li_die "podman-compose is not installed: bash tools/setup.sh --containers (apt-get install podman-compose)"
  command -v node >/dev/null 2>&1 && [ -d "$REPO_ROOT/node_modules/yaml" ] ||
    li_die "node and the project's dependencies are needed to read docker-compose.yml: bash tools/setup.sh"
  mkdir -p "$COMPOSE_LOGS"
}
