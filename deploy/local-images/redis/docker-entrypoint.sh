#!/bin/bash
# Entry point of the redis stand-in, with the official image's behaviour:
#  - `IMAGE --port 6380` or `IMAGE /etc/redis.conf` runs redis-server with those arguments;
#  - protected mode off by default: the official image builds Redis with protected-mode defaulting to
#    "no" (it is reached from other containers, never over loopback); Debian's build defaults to "yes",
#    which would refuse every other container when no password is set. Arguments or a configuration
#    file that set protected-mode win;
#  - started as root, it drops to the redis user (uid 999) after taking ownership of /data.
set -euo pipefail
if [ "${1#-}" != "${1:-}" ] || [ "${1%.conf}" != "${1:-}" ]; then
  set -- redis-server "$@"
fi
if [ "${1:-}" = redis-server ]; then
  shift
  conf=()
  if [ $# -gt 0 ] && [ "${1%.conf}" != "$1" ]; then
    conf=("$1")
    shift
  fi
  protected=(--protected-mode no)
  if printf '%s\n' "$@" | grep -qx -- '--protected-mode'; then protected=(); fi
  if [ ${#conf[@]} -gt 0 ] && grep -qiE '^[[:space:]]*protected-mode' "${conf[0]}" 2>/dev/null; then protected=(); fi
  set -- redis-server "${conf[@]}" "${protected[@]}" "$@"
  if [ "$(id -u)" = 0 ]; then
    find . \! -user redis -exec chown redis '{}' + 2>/dev/null || true
    exec setpriv --reuid=redis --regid=redis --init-groups "$@"
  fi
fi
exec "$@"
