#!/usr/bin/env bash
# Start / stop / inspect the local single-node Kafka broker (KRaft) alone.
#
#   bash tools/infra/kafka.sh start    # start (no-op if 127.0.0.1:9092 already answers);
#                                      # waits until the broker answers metadata requests;
#                                      # never reformats an existing log dir
#   bash tools/infra/kafka.sh stop     # SIGTERM, up to 30 s, then SIGKILL; port closed on return
#   bash tools/infra/kafka.sh status   # exit 0 running, 2 process alive but not answering, 3 stopped
#   bash tools/infra/kafka.sh restart
#
# See tools/infra/README.md for env vars and file locations.
set -euo pipefail

# shellcheck source=tools/infra/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

usage() {
  echo "usage: $0 {start|stop|status|restart}" >&2
  exit 64
}

[ $# -eq 1 ] || usage

case "$1" in
  start)
    infra_lock
    t0=$(now_ms)
    kafka_start
    echo "kafka: $KAFKA_ACTION on $KAFKA_BOOTSTRAP ($(($(now_ms) - t0)) ms)"
    ;;
  stop)
    infra_lock
    kafka_stop
    echo "kafka: stopped"
    ;;
  restart)
    infra_lock
    kafka_stop
    kafka_start
    echo "kafka: $KAFKA_ACTION on $KAFKA_BOOTSTRAP"
    ;;
  status)
    kafka_status
    ;;
  *)
    usage
    ;;
esac
