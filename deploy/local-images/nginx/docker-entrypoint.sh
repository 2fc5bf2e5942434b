#!/bin/sh
# Entry point of the nginx stand-in, with the official image's behaviour: when the command is nginx
# (or nginx-debug), the executable scripts of /docker-entrypoint.d run first (none here: the official
# ones render templates into /etc/nginx, which the platform never uses); any command then runs as it is.
# docker-compose.yml and deploy/kube-play bypass it and run nginx with the gateway's configuration.
set -e
if [ "$1" = nginx ] || [ "$1" = nginx-debug ]; then
  for script in /docker-entrypoint.d/*; do
    [ -f "$script" ] && [ -x "$script" ] || continue
    echo "$0: running $script" >&2
    "$script"
  done
fi
exec "$@"
