#!/usr/bin/env bash
# Start / stop / inspect the local three-master Redis Cluster (127.0.0.1:7001-7003, no replicas)
# that the auth service's cluster integration test runs against (ADR 0018). REDIS_URL for it:
#   redis-cluster://127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003
#
#   bash tools/infra/redis-cluster.sh start    # no-op when it already runs; else starts the missing nodes
#                                              # (daemonized, state in .infra/redis-cluster/<port>/),
#                                              # creates the cluster the first time (fresh nodes only;
#                                              # nodes with a nodes.conf rejoin) and waits for cluster_state:ok
#   bash tools/infra/redis-cluster.sh stop     # SHUTDOWN NOSAVE of our nodes; nodes.conf is kept
#   bash tools/infra/redis-cluster.sh status   # exit 0 ok, 2 some node up but the cluster not ok, 3 stopped
#   bash tools/infra/redis-cluster.sh reset    # stop, delete .infra/redis-cluster, start a new cluster
#
# See tools/infra/README.md for file locations.
set -euo pipefail

# shellcheck source=tools/infra/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

usage() {
  echo "usage: $0 {start|stop|status|reset}" >&2
  exit 64
}

[ $# -eq 1 ] || usage

case "$1" in
  start)
    infra_lock
    t0=$(now_ms)
    redis_cluster_start
    echo "redis-cluster: $REDIS_CLUSTER_ACTION, $REDIS_CLUSTER_URL ($(($(now_ms) - t0)) ms)"
    ;;
  stop)
    infra_lock
    redis_cluster_stop
    echo "redis-cluster: stopped"
    ;;
  reset)
    infra_lock
    redis_cluster_stop || infra_die "a node not started by tools/infra holds one of the ports; not resetting"
    rm -rf "$REDIS_CLUSTER_DIR"
    redis_cluster_start
    echo "redis-cluster: $REDIS_CLUSTER_ACTION, $REDIS_CLUSTER_URL"
    ;;
  status)
    redis_cluster_status
    ;;
  *)
    usage
    ;;
esac
