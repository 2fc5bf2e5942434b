#!/bin/bash
# kafka-server-start.sh server.properties: the broker in the foreground, as the distribution's script
# (1 GiB heap and G1 unless KAFKA_HEAP_OPTS / KAFKA_JVM_PERFORMANCE_OPTS say otherwise).
if [ $# -lt 1 ]; then
  echo "USAGE: $0 server.properties [--override property=value]*" >&2
  exit 1
fi
export KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xmx1G -Xms1G}"
export KAFKA_JVM_PERFORMANCE_OPTS="${KAFKA_JVM_PERFORMANCE_OPTS:--server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 -Djava.awt.headless=true}"
export KAFKA_LOG4J_OPTS="${KAFKA_LOG4J_OPTS:--Dlog4j2.configurationFile=/opt/kafka/config/log4j2.yaml}"
exec "$(dirname "$0")/kafka-run-class.sh" kafka.Kafka "$@"
