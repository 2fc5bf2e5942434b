#!/usr/bin/env bash
# Stop what tools/infra/up.sh started.
#   - the Kafka broker (always, if it is ours: SIGTERM, up to 30 s, then SIGKILL)
#   - the 3-node Kafka cluster of kafka-cluster.sh, if it runs (same)
#   - the Redis Cluster nodes on 7001-7006 (always, if they are ours; nodes.conf is kept)
#   - PostgreSQL / Redis only if up.sh started them itself (recorded in
#     $INVOICING_STATE_DIR/started-by-us); otherwise they are left running.
#
#   bash tools/infra/down.sh            # keep Kafka data
#   bash tools/infra/down.sh --purge    # also delete the Kafka data dirs (single broker and 3-node
#                                       # cluster: topics, offsets) and the Redis Cluster state
#                                       # (the next up.sh creates a new cluster)
set -euo pipefail

INFRA_SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=tools/infra/lib.sh
source "$INFRA_SCRIPT_DIR/lib.sh"
# shellcheck source=tools/infra/kafka-cluster-lib.sh
source "$INFRA_SCRIPT_DIR/kafka-cluster-lib.sh"

PURGE=false
for arg in "$@"; do
  case "$arg" in
    --purge) PURGE=true ;;
    -h | --help)
      sed -n '2,13p' "$0"
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
kafka_cluster_stop || infra_log "Kafka cluster port(s) left to a process not ours"
redis_cluster_stop || infra_log "Redis Cluster node(s) left running (not ours)"

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
  infra_log "deleting Kafka cluster data $KAFKA_CLUSTER_DIR"
  rm -rf "$KAFKA_CLUSTER_DIR"
  infra_log "deleting Redis Cluster state $REDIS_CLUSTER_DIR"
  rm -rf "$REDIS_CLUSTER_DIR"
fi

echo "infra is down"
