#!/bin/bash
# Entry point of the postgres stand-in: the official postgres image's contract (see the Containerfile),
# written for Debian's PostgreSQL packages.
set -Eeo pipefail

log() { printf '%s [entrypoint] %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*"; }

# VAR or VAR_FILE (Docker secrets), never both.
file_env() {
  local var="$1" def="${2:-}" file_var="${1}_FILE" val
  if [ -n "${!var:-}" ] && [ -n "${!file_var:-}" ]; then
    log "error: both $var and $file_var are set (but are exclusive)" >&2
    exit 1
  fi
  val="$def"
  if [ -n "${!var:-}" ]; then
    val="${!var}"
  elif [ -n "${!file_var:-}" ]; then
    val="$(<"${!file_var}")"
  fi
  export "$var"="$val"
  unset "$file_var"
}

want_help() {
  local arg
  for arg; do
    case "$arg" in -'?' | --help | --describe-config | -V | --version) return 0 ;; esac
  done
  return 1
}

process_sql() {
  psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --no-password --no-psqlrc --dbname "${PGDATABASE:-$POSTGRES_DB}" "$@"
}

if [ "${1:0:1}" = '-' ]; then
  set -- postgres "$@"
fi

if [ "$1" = postgres ] && ! want_help "$@"; then
  if [ "$(id -u)" = 0 ]; then
    mkdir -p "$PGDATA" /var/run/postgresql
    chown -R postgres:postgres "$PGDATA" /var/run/postgresql 2>/dev/null || true
    chmod 00700 "$PGDATA" 2>/dev/null || true
    chmod 3777 /var/run/postgresql 2>/dev/null || true
    exec env HOME=/var/lib/postgresql setpriv --reuid=postgres --regid=postgres --init-groups "${BASH_SOURCE[0]}" "$@"
  fi

  log "local stand-in image: PostgreSQL $(postgres --version | awk '{print $3}') from Debian bookworm (deploy/local-images)"
  file_env POSTGRES_PASSWORD
  file_env POSTGRES_USER postgres
  file_env POSTGRES_DB "$POSTGRES_USER"
  file_env POSTGRES_INITDB_ARGS
  : "${POSTGRES_HOST_AUTH_METHOD:=}"

  if [ ! -s "$PGDATA/PG_VERSION" ]; then
    if [ -z "$POSTGRES_PASSWORD" ] && [ "$POSTGRES_HOST_AUTH_METHOD" != trust ]; then
      cat >&2 <<'MSG'
Error: Database is uninitialized and superuser password is not specified.
       Set POSTGRES_PASSWORD to a non-empty value for the superuser (or POSTGRES_HOST_AUTH_METHOD=trust
       to allow all connections without a password; not recommended).
MSG
      exit 1
    fi
    mkdir -p "$PGDATA"
    chmod 00700 "$PGDATA" 2>/dev/null || true
    log "initialising $PGDATA"
    # shellcheck disable=SC2086
    initdb --username="$POSTGRES_USER" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") $POSTGRES_INITDB_ARGS
    auth="${POSTGRES_HOST_AUTH_METHOD:-$(postgres -C password_encryption -D "$PGDATA" 2>/dev/null || echo scram-sha-256)}"
    printf '\nhost all all all %s\n' "$auth" >>"$PGDATA/pg_hba.conf"

    # Initialisation: a server on the Unix socket only (TCP health checks stay red until it is done).
    export PGPASSWORD="${PGPASSWORD:-$POSTGRES_PASSWORD}"
    pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -p ${PGPORT:-5432}" -w start
    if [ "$POSTGRES_DB" != postgres ]; then
      PGDATABASE=postgres process_sql --set db="$POSTGRES_DB" --tuples-only <<<"SELECT 1 FROM pg_database WHERE datname = :'db'" | grep -q 1 ||
        PGDATABASE=postgres process_sql --set db="$POSTGRES_DB" <<<'CREATE DATABASE :"db";'
    fi
    for f in /docker-entrypoint-initdb.d/*; do
      [ -e "$f" ] || continue
      case "$f" in
        *.sh)
          if [ -x "$f" ]; then
            log "running $f"
            "$f"
          else
            log "sourcing $f"
            # shellcheck disable=SC1090
            . "$f"
          fi
          ;;
        *.sql) log "running $f"; process_sql -f "$f"; echo ;;
        *.sql.gz) log "running $f"; gunzip -c "$f" | process_sql; echo ;;
        *.sql.xz) log "running $f"; xzcat "$f" | process_sql; echo ;;
        *) log "ignoring $f" ;;
      esac
    done
    pg_ctl -D "$PGDATA" -m fast -w stop
    unset PGPASSWORD
    log "PostgreSQL init process complete; ready for start up."
  else
    log "PostgreSQL database directory appears to contain a database; skipping initialisation"
  fi
fi

exec "$@"
