#!/usr/bin/env bash
# A local 3-node Apache Kafka cluster (KRaft; each node broker + controller, a 3-voter quorum) for
# replication and fault trials, beside the single broker of up.sh (which stays the default). NOT
# started by up.sh (three JVMs): the resilience tier starts and stops it. Clients:
#   127.0.0.1:19092,127.0.0.1:19093,127.0.0.1:19094
#
#   bash tools/infra/kafka-cluster.sh start             # start the brokers not running (formats never-formatted
#                                                       # data dirs, one cluster id), wait until all three answer,
#                                                       # create the topics of up.sh if absent (RF 3,
#                                                       # min.insync.replicas=2), wait for complete ISRs;
#                                                       # prints the bootstrap list
#   bash tools/infra/kafka-cluster.sh stop              # SIGTERM all three at once, SIGKILL after 30 s
#   bash tools/infra/kafka-cluster.sh status            # exit 0 all three answer, 2 partly up, 3 stopped
#   bash tools/infra/kafka-cluster.sh kill N            # kill -9 broker N (1-3): the fault trial (takes no lock)
#   bash tools/infra/kafka-cluster.sh start-broker N    # start broker N again with its data; wait until it answers
#                                                       # and is back in the ISR of every partition
#   bash tools/infra/kafka-cluster.sh restart-broker N  # SIGTERM (controlled shutdown) + start-broker N
#   bash tools/infra/kafka-cluster.sh wait-isr [SECONDS]  # wait until every partition has all its replicas
#                                                       # in the ISR (default 60 s); exit 1 if not
#   bash tools/infra/kafka-cluster.sh reset             # stop, delete its data, start a new cluster
#
# See tools/infra/README.md for env vars, files and timings.
set -euo pipefail

INFRA_SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=tools/infra/lib.sh
source "$INFRA_SCRIPT_DIR/lib.sh"
# shellcheck source=tools/infra/kafka-cluster-lib.sh
source "$INFRA_SCRIPT_DIR/kafka-cluster-lib.sh"

usage() {
  echo "usage: $0 {start|stop|status|reset|kill N|start-broker N|restart-broker N|wait-isr [SECONDS]}" >&2
  exit 64
}

[ $# -ge 1 ] || usage
cmd="$1"
shift
case "$cmd" in
  kill | start-broker | restart-broker)
    [ $# -eq 1 ] || usage
    kafka_cluster_valid_node "$1" || infra_die "not a Kafka cluster node: '$1' (1, 2 or 3)"
    ;;
  wait-isr)
    [ $# -le 1 ] || usage
    [ $# -eq 0 ] || [[ "$1" =~ ^[0-9]+$ ]] || usage
    ;;
  *) [ $# -eq 0 ] || usage ;;
esac

t0=$(now_ms)
case "$cmd" in
  start)
    infra_lock
    kafka_cluster_start
    echo "kafka-cluster: $KAFKA_CLUSTER_ACTION, $KAFKA_CLUSTER_TOPICS_CREATED topic(s) created, every ISR complete ($(($(now_ms) - t0)) ms)"
    echo "$KAFKA_CLUSTER_BOOTSTRAP"
    ;;
  stop)
    infra_lock
    kafka_cluster_stop
    echo "kafka-cluster: stopped ($(($(now_ms) - t0)) ms)"
    ;;
  reset)
    infra_lock
    kafka_cluster_stop || infra_die "a port of the Kafka cluster is held by a process tools/infra did not start; not resetting"
    rm -rf "$KAFKA_CLUSTER_DIR"
    kafka_cluster_start
    echo "kafka-cluster: $KAFKA_CLUSTER_ACTION ($(($(now_ms) - t0)) ms)"
    echo "$KAFKA_CLUSTER_BOOTSTRAP"
    ;;
  status)
    kafka_cluster_status
    ;;
  kill)
    # No lock: the fault must land now, even while another command (e.g. a start-broker waiting for
    # the ISR) holds it.
    kafka_cluster_kill "$1"
    echo "kafka-cluster: killed broker $1"
    ;;
  start-broker)
    infra_lock
    kafka_cluster_start_broker "$1"
    echo "kafka-cluster: broker $1 $KAFKA_CLUSTER_ACTION, answers and is in the ISR of every partition ($(($(now_ms) - t0)) ms)"
    ;;
  restart-broker)
    infra_lock
    kafka_cluster_stop_nodes "$1"
    kafka_cluster_start_broker "$1"
    echo "kafka-cluster: broker $1 restarted, answers and is in the ISR of every partition ($(($(now_ms) - t0)) ms)"
    ;;
  wait-isr)
    # No lock: read-only.
    kafka_cluster_wait_isr full "${1:-$KAFKA_CLUSTER_ISR_TIMEOUT}"
    echo "kafka-cluster: every partition has all its replicas in the ISR ($(($(now_ms) - t0)) ms)"
    ;;
  *)
    usage
    ;;
esac
