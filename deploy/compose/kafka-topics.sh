#!/bin/sh
# The compose stack's one-shot topic creation (the kafka-topics service), mounted into the official
# Kafka image. The topics are created explicitly (an existing topic is left as it is): the revocation
# topic of docs/api.md section 6, 6 partitions, retention 2 h = twice the longest access-token
# lifetime; the domain events topic, 6 partitions, compacted (the latest event of every object stays);
# the audit stream, 7 days; webhook endpoints (a disabled one for the audit log, ADR 0037), 30 days;
# API key changes told by webhook (ADR 0037), 30 days.
set -eu

# Each creation is tried up to 5 times, 2 s apart: podman's network DNS once failed to resolve
# `kafka` between two calls while other containers joined the network.
retry() {
  n=1
  until "$@"; do
    if [ "$n" -ge 5 ]; then return 1; fi
    n=$((n + 1))
    sleep 2
  done
}

retry /opt/kafka/bin/kafka-topics.sh --bootstrap-server kafka:9092 --create --if-not-exists \
  --topic auth.revocations.v1 --partitions 6 --replication-factor 1 \
  --config retention.ms=7200000 --config cleanup.policy=delete
retry /opt/kafka/bin/kafka-topics.sh --bootstrap-server kafka:9092 --create --if-not-exists \
  --topic invoicing.domain.v1 --partitions 6 --replication-factor 1 \
  --config cleanup.policy=compact
retry /opt/kafka/bin/kafka-topics.sh --bootstrap-server kafka:9092 --create --if-not-exists \
  --topic auth.audit.v1 --partitions 6 --replication-factor 1 \
  --config retention.ms=604800000 --config cleanup.policy=delete
retry /opt/kafka/bin/kafka-topics.sh --bootstrap-server kafka:9092 --create --if-not-exists \
  --topic webhooks.endpoints.v1 --partitions 6 --replication-factor 1 \
  --config retention.ms=2592000000 --config cleanup.policy=delete
retry /opt/kafka/bin/kafka-topics.sh --bootstrap-server kafka:9092 --create --if-not-exists \
  --topic auth.api-keys.v1 --partitions 6 --replication-factor 1 \
  --config retention.ms=2592000000 --config cleanup.policy=delete
