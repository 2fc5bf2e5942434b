#!/bin/sh
# As in the official node image: `docker run IMAGE script.js` or `IMAGE --version` runs node; a
# command that exists (`IMAGE bash`) runs as it is.
set -e
if [ "${1#-}" != "$1" ] || [ -z "$(command -v "$1" 2>/dev/null)" ] || { [ -f "$1" ] && [ ! -x "$1" ]; }; then
  set -- node "$@"
fi
exec "$@"
