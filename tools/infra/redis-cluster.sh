#!/usr/bin/env bash
# Start / stop / inspect the local Redis Cluster that the auth service's cluster integration test
# runs against (ADR 0018): three primaries on 127.0.0.1:7001-7003, each with one replica
# (7004 follows 7001, 7005 7002, 7006 7003, as created). REDIS_URL for it:
#   redis-cluster://127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003,127.0.0.1:7004,127.0.0.1:7005,127.0.0.1:7006
#
#   bash tools/infra/redis-cluster.sh start    # no-op when it is healthy; else starts the missing nodes
#                                              # (daemonized, state in .infra/redis-cluster/<port>/),
#                                              # creates the cluster the first time (fresh nodes only;
#                                              # nodes with a nodes.conf rejoin, whatever their role now)
#                                              # and waits until it is healthy. State of another layout
#                                              # (the three masters of old) is discarded first.
#   bash tools/infra/redis-cluster.sh stop     # SHUTDOWN NOSAVE of our nodes, replicas first; nodes.conf is kept
#   bash tools/infra/redis-cluster.sh status   # exit 0 healthy, 2 some node up but not healthy, 3 stopped
#   bash tools/infra/redis-cluster.sh reset    # stop, delete .infra/redis-cluster, start a new cluster
#   bash tools/infra/redis-cluster.sh nodes    # "PORT ROLE PRIMARY-PORT STATE" per node, e.g. "7004 slave 7001 ok"
#   bash tools/infra/redis-cluster.sh wait-ok [SECONDS]   # wait until healthy (default 30 s); exit 1 if not
#   bash tools/infra/redis-cluster.sh kill PORT           # kill -9 that node (fault trial; takes no lock)
#   bash tools/infra/redis-cluster.sh start-node PORT     # start one stopped node; waits until healthy
#                                                         # (a former primary first waits for its
#                                                         # replica to take over: it keeps no data)
#   bash tools/infra/redis-cluster.sh rebalance-roles     # CLUSTER FAILOVER on 7001-7003 where they are
#                                                         # replicas: back to the layout as created
#
# Healthy: six nodes answer, all report cluster_state:ok, 16384 slots and six known nodes, none is
# flagged failing, three primaries each with one replica in sync (whichever ports they are).
# See tools/infra/README.md for file locations.
set -euo pipefail

# shellcheck source=tools/infra/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

usage() {
  echo "usage: $0 {start|stop|status|reset|nodes|wait-ok [SECONDS]|kill PORT|start-node PORT|rebalance-roles}" >&2
  exit 64
}

[ $# -ge 1 ] || usage
cmd="$1"
shift
case "$cmd" in
  kill | start-node) [ $# -eq 1 ] || usage ;;
  wait-ok) [ $# -le 1 ] || usage ;;
  *) [ $# -eq 0 ] || usage ;;
esac

t0=$(now_ms)
case "$cmd" in
  start)
    infra_lock
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
    echo "redis-cluster: $REDIS_CLUSTER_ACTION, $REDIS_CLUSTER_URL ($(($(now_ms) - t0)) ms)"
    ;;
  status)
    redis_cluster_status
    ;;
  nodes)
    redis_cluster_nodes
    ;;
  wait-ok)
    if [ $# -eq 1 ]; then
      [[ "$1" =~ ^[0-9]+$ ]] || usage
      REDIS_CLUSTER_START_TIMEOUT="$1"
    fi
    redis_cluster_wait "the cluster did not become healthy" redis_cluster_ok
    echo "redis-cluster: healthy ($(($(now_ms) - t0)) ms)"
    ;;
  kill)
    # No lock: a fault must land now, even while another command (e.g. a start waiting) holds it.
    redis_cluster_kill "$1"
    echo "redis-cluster: killed 127.0.0.1:$1"
    ;;
  start-node)
    infra_lock
    redis_cluster_start_one "$1"
    echo "redis-cluster: 127.0.0.1:$1 $REDIS_CLUSTER_ACTION, cluster healthy ($(($(now_ms) - t0)) ms)"
    ;;
  rebalance-roles)
    infra_lock
    redis_cluster_rebalance_roles
    echo "redis-cluster: roles $REDIS_CLUSTER_ACTION ($(($(now_ms) - t0)) ms)"
    ;;
  *)
    usage
    ;;
esac
