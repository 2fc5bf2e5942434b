#!/bin/bash
# kafka-run-class.sh CLASS [ARGS...]: runs a class of the Kafka jars, with the environment variables
# of the distribution's launcher (KAFKA_HEAP_OPTS, KAFKA_JVM_PERFORMANCE_OPTS, KAFKA_LOG4J_OPTS,
# KAFKA_OPTS, CLASSPATH). Written for the apache/kafka stand-in (the jars come from Maven Central,
# which has no bin/ scripts). Command-line tools get a JVM tuned for a short life unless
# KAFKA_JVM_PERFORMANCE_OPTS is set: health checks run one every few seconds.
set -e
base_dir=/opt/kafka
if [ $# -lt 1 ]; then
  echo "USAGE: $0 classname [opts]" >&2
  exit 1
fi
heap="${KAFKA_HEAP_OPTS:--Xmx256M}"
perf="${KAFKA_JVM_PERFORMANCE_OPTS:--XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto -Djava.awt.headless=true}"
log4j="${KAFKA_LOG4J_OPTS:--Dlog4j2.configurationFile=$base_dir/config/tools-log4j2.yaml}"
# shellcheck disable=SC2086
exec java $heap $perf $log4j ${KAFKA_OPTS:-} -cp "$base_dir/libs/*${CLASSPATH:+:$CLASSPATH}" "$@"
