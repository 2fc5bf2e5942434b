#!/usr/bin/env bash
# Stops or starts the compose stack's Kafka broker, like tools/infra/kafka.sh does for the local one
# (the end-to-end tests' E2E_KAFKA_CTL): `start` returns once the broker is healthy again.
#   bash tools/compose/kafka.sh stop|start
set -euo pipefail
# shellcheck source=tools/compose/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
cc_require
case "${1:-}" in
  stop) podman stop -t 10 "$(cc_container kafka)" >/dev/null ;;
  start)
    podman start "$(cc_container kafka)" >/dev/null
    cc_wait_healthy kafka 180
    ;;
  *) li_die "usage: $0 stop|start" ;;
esac
