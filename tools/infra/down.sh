#!/usr/bin/env bash
# Stop what tools/infra/up.sh started.
#   - the Kafka broker (always, if it is ours: SIGTERM, up to 30 s, then SIGKILL)
#   - PostgreSQL / Redis only if up.sh started them itself (recorded in
#     $INVOICING_STATE_DIR/started-by-us); otherwise they are left running.
#
#   bash tools/infra/down.sh            # keep Kafka data
#   bash tools/infra/down.sh --purge    # also delete the Kafka data dir (topics, offsets)
set -euo pipefail

# shellcheck source=tools/infra/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

PURGE=false
for arg in "$@"; do
  case "$arg" in
    --purge) PURGE=true ;;
    -h | --help)
      sed -n '2,9p' "$0"
      exit 0
      ;;
    *)
      echo "usage: $0 [--purge]" >&2
      exit 64
      ;;
  esac
done

infra_lock

kafka_stop || infra_log "Kafka left running (not ours)"

if was_started_by_us redis; then
  redis_stop
  unmark_started_by_us redis
else
  infra_log "Redis left running (not started by up.sh)"
fi

if was_started_by_us postgres; then
  pg_stop
  unmark_started_by_us postgres
else
  infra_log "PostgreSQL left running (not started by up.sh)"
fi

if $PURGE; then
  infra_log "deleting Kafka data $KAFKA_DATA_DIR"
  rm -rf "$KAFKA_DATA_DIR" "$INVOICING_STATE_DIR/kafka-cluster-id"
fi

echo "infra is down"
