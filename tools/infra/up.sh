#!/usr/bin/env bash
# Bring up the local infrastructure on loopback, idempotently:
#   PostgreSQL 127.0.0.1:5432 (+ database, schemas and roles from deploy/k8s/base/platform/postgres/bootstrap.sql)
#   Redis      127.0.0.1:6379
#   Redis Cluster 127.0.0.1:7001-7006 (three primaries with one replica each, for the auth
#              service's cluster test)
#   Kafka      127.0.0.1:9092 (single-node KRaft broker, controller on :9093)
#              + topics auth.revocations.v1, invoicing.domain.v1, auth.audit.v1, webhooks.endpoints.v1
#              and auth.api-keys.v1
# (Not the 3-node Kafka cluster of kafka-cluster.sh: the resilience tier starts that itself.)
# Safe to run repeatedly; a second run only checks and re-applies the (idempotent)
# bootstrap. Works non-interactively (CI=true, no stdin).
#
#   bash tools/infra/up.sh
#
# See tools/infra/README.md for env vars and file locations.
set -euo pipefail

# shellcheck source=tools/infra/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

T0=$(now_ms)
infra_lock

# 1. PostgreSQL ---------------------------------------------------------------
if ! command -v psql >/dev/null 2>&1 || ! command -v pg_isready >/dev/null 2>&1; then
  infra_die "psql and pg_isready (postgresql-client) are required"
fi
pg_start_if_needed
pg_bootstrap || infra_die "postgres bootstrap failed ($REPO_ROOT/deploy/k8s/base/platform/postgres/bootstrap.sql)"

# 2. Redis ---------------------------------------------------------------------
command -v redis-cli >/dev/null 2>&1 || infra_die "redis-cli is required"
redis_start_if_needed

# 3. Redis Cluster -------------------------------------------------------------
redis_cluster_start

# 4. Kafka ---------------------------------------------------------------------
kafka_start

# 5. Topics --------------------------------------------------------------------
kafka_ensure_libs # the topic tool runs from the same jars (no-op when cached)
kafka_create_topic "$REVOCATIONS_TOPIC" "retention.ms=$REVOCATIONS_RETENTION_MS" cleanup.policy=delete
kafka_create_topic "$DOMAIN_TOPIC" cleanup.policy=compact
kafka_create_topic "$AUDIT_TOPIC" "retention.ms=$AUDIT_RETENTION_MS" cleanup.policy=delete
kafka_create_topic "$WEBHOOK_ENDPOINTS_TOPIC" "retention.ms=$WEBHOOK_ENDPOINTS_RETENTION_MS" cleanup.policy=delete
kafka_create_topic "$API_KEYS_TOPIC" "retention.ms=$API_KEYS_RETENTION_MS" cleanup.policy=delete

cat <<EOF
infra is up ($(($(now_ms) - T0)) ms):
  postgres  127.0.0.1:5432  ${PG_ACTION}  database '$PGDATABASE_NAME', roles <svc>_owner / <svc>_app (password <role>_dev)
  redis     127.0.0.1:6379  ${REDIS_ACTION}
  redis-cluster 127.0.0.1:7001-7006  ${REDIS_CLUSTER_ACTION}  (3 primaries + 1 replica each; REDIS_URL=$REDIS_CLUSTER_URL)
  kafka     127.0.0.1:9092  ${KAFKA_ACTION}  (Kafka $KAFKA_VERSION, KRaft controller 127.0.0.1:9093)
            topic $REVOCATIONS_TOPIC (6 partitions, retention.ms=$REVOCATIONS_RETENTION_MS)
            topic $DOMAIN_TOPIC (6 partitions, compacted)
            topic $AUDIT_TOPIC (6 partitions, retention.ms=$AUDIT_RETENTION_MS)
            topic $WEBHOOK_ENDPOINTS_TOPIC (6 partitions, retention.ms=$WEBHOOK_ENDPOINTS_RETENTION_MS)
            topic $API_KEYS_TOPIC (6 partitions, retention.ms=$API_KEYS_RETENTION_MS)
  state     $INVOICING_STATE_DIR  (kafka log: $KAFKA_LOG)
  stop with bash tools/infra/down.sh [--purge]
EOF
