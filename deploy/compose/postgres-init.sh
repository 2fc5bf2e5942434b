#!/bin/sh
# Runs once, when the postgres container initialises an empty data volume
# (/docker-entrypoint-initdb.d): the same idempotent bootstrap as tools/infra/up.sh and the
# Kubernetes Job, with the psql variables it expects. Development passwords (<role>_dev) only.
set -eu
psql -X -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  -v dbname=invoicing -v dev_passwords=true \
  -f /invoicing/bootstrap.sql
