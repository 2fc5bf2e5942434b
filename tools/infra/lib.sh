# shellcheck shell=bash
# The settings and *_ACTION results below are read by the scripts that source this file:
# shellcheck disable=SC2034
# Shared helpers for tools/infra/{up,down,kafka,redis-cluster,kafka-cluster}.sh. Source it; don't run it.
# (The 3-broker Kafka cluster's functions are in kafka-cluster-lib.sh, sourced after this file.)
#
# Everything here only ever touches loopback (127.0.0.1) services and
# processes this project started itself (tracked through pid files).

# ---------------------------------------------------------------------------
# Paths & settings (all overridable through the environment)
# ---------------------------------------------------------------------------
INFRA_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$INFRA_DIR/../.." && pwd)"

# Kafka version: the newest release whose artifacts are *complete* on Maven
# Central and that works with kafkajs@2.2.4 (verified: produce, consumer group,
# admin createTopics/fetchTopicOffsets/fetchTopicOffsetsByTimestamp).
# 4.4.0 is listed on Maven Central but kafka_2.13:4.4.0 depends on
# kafka-tools-api:4.4.0, which is not published there (yet), so it cannot be
# resolved. Bump when a newer complete release exists (re-run the kafkajs check).
KAFKA_VERSION="${KAFKA_VERSION:-4.3.1}"
INVOICING_CACHE_DIR="${INVOICING_CACHE_DIR:-${HOME:-/root}/.cache/invoicing}"
INVOICING_STATE_DIR="${INVOICING_STATE_DIR:-$REPO_ROOT/.infra}"

KAFKA_HOST=127.0.0.1
KAFKA_PORT=9092
KAFKA_CONTROLLER_PORT=9093
KAFKA_BOOTSTRAP="$KAFKA_HOST:$KAFKA_PORT"
KAFKA_HOME="$INVOICING_CACHE_DIR/kafka-$KAFKA_VERSION"
KAFKA_LIBS="$KAFKA_HOME/libs"
KAFKA_DATA_DIR="$INVOICING_STATE_DIR/kafka-data"
KAFKA_CONF_DIR="$INVOICING_STATE_DIR/kafka"
KAFKA_CONF="$KAFKA_CONF_DIR/server.properties"
KAFKA_PID_FILE="$INVOICING_STATE_DIR/kafka.pid"
INFRA_LOG_DIR="$INVOICING_STATE_DIR/logs"
KAFKA_LOG="$INFRA_LOG_DIR/kafka.log"
KAFKA_START_TIMEOUT="${KAFKA_START_TIMEOUT:-90}"
KAFKA_STOP_TIMEOUT="${KAFKA_STOP_TIMEOUT:-30}"
KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}"
KAFKA_LOG4J="$INFRA_DIR/kafka/log4j2.properties"

PG_HOST=127.0.0.1
PG_PORT=5432
PGDATABASE_NAME="${PGDATABASE_NAME:-invoicing}"
REDIS_HOST=127.0.0.1
REDIS_PORT=6379
# A Redis Cluster beside the single Redis (the auth service runs on both; ADR 0018): three primaries
# (7001-7003 as created) with one replica each (7004-7006); a failover may swap the roles.
REDIS_CLUSTER_HOST=127.0.0.1
REDIS_CLUSTER_PRIMARY_PORTS="7001 7002 7003"
REDIS_CLUSTER_REPLICA_PORTS="7004 7005 7006"
REDIS_CLUSTER_PORTS="$REDIS_CLUSTER_PRIMARY_PORTS $REDIS_CLUSTER_REPLICA_PORTS"
# Every node is a seed: the client finds the primaries whichever of them answers first.
REDIS_CLUSTER_URL="redis-cluster://127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003,127.0.0.1:7004,127.0.0.1:7005,127.0.0.1:7006"
REDIS_CLUSTER_DIR="$INVOICING_STATE_DIR/redis-cluster"
REDIS_CLUSTER_START_TIMEOUT="${REDIS_CLUSTER_START_TIMEOUT:-30}"
REDIS_CLUSTER_NODE_TIMEOUT_MS="${REDIS_CLUSTER_NODE_TIMEOUT_MS:-3000}"

REVOCATIONS_TOPIC=auth.revocations.v1
# Domain events (client, product, invoice, payment, expense created): compacted, key = object id,
# so the latest event of every object stays and a service can rebuild its read model from it.
DOMAIN_TOPIC=invoicing.domain.v1
# The audit stream (ADR 0024): a SIEM reads it; a week lets one catch up after an outage.
AUDIT_TOPIC=auth.audit.v1
AUDIT_RETENTION_MS="${AUDIT_RETENTION_MS:-604800000}"
# What happens to webhook endpoints (ADR 0037; key = endpoint id), from the webhook service's outbox:
# the auth service records a disabled endpoint in the audit log. 30 days: the longest the auth
# service may be down without losing a record.
WEBHOOK_ENDPOINTS_TOPIC=webhooks.endpoints.v1
WEBHOOK_ENDPOINTS_RETENTION_MS="${WEBHOOK_ENDPOINTS_RETENTION_MS:-2592000000}"
# What a key's owner is told by webhook (ADR 0037; key = API key id), from the auth service's outbox:
# the webhook service reads it once per service. 30 days, not the revocation topic's 2 hours: the
# longest the webhook service may be down without losing a key change.
API_KEYS_TOPIC=auth.api-keys.v1
API_KEYS_RETENTION_MS="${API_KEYS_RETENTION_MS:-2592000000}"
# 2 x the 1 h access-token lifetime.
REVOCATIONS_RETENTION_MS="${REVOCATIONS_RETENTION_MS:-7200000}"

# Records which services up.sh itself started (so down.sh only stops those).
STARTED_BY_US_FILE="$INVOICING_STATE_DIR/started-by-us"

# ---------------------------------------------------------------------------
# Output helpers
# ---------------------------------------------------------------------------
infra_log() { printf '[infra] %s\n' "$*" >&2; }
infra_die() {
  printf '[infra] ERROR: %s\n' "$*" >&2
  exit 1
}
now_ms() { date +%s%3N; }

ensure_state_dirs() {
  mkdir -p "$INVOICING_STATE_DIR" "$INFRA_LOG_DIR" "$KAFKA_CONF_DIR"
}

# Serialise concurrent up/down/kafka.sh runs (e.g. several Nx targets at once).
# fd 9 is closed in every daemon we spawn (see close_inherited_fds / 9>&-) so a
# long-lived process never keeps the lock.
# The lock is re-entrant along the process tree: a tools/infra script run (directly or not) by a
# process that holds it (INFRA_LOCK_OWNER names that process and the lock file) does not wait for
# it, which would be for ever. Fault-injection commands (kafka-cluster.sh kill, redis-cluster.sh kill)
# and read-only ones take no lock at all.
infra_lock() {
  ensure_state_dirs
  command -v flock >/dev/null 2>&1 || return 0
  if infra_lock_held_by_caller; then
    return 0
  fi
  exec 9>"$INVOICING_STATE_DIR/.lock"
  if ! flock -w 180 9; then
    infra_die "another tools/infra script holds $INVOICING_STATE_DIR/.lock for > 180 s"
  fi
  export INFRA_LOCK_OWNER="$$:$INVOICING_STATE_DIR/.lock"
}

# True when INFRA_LOCK_OWNER names this lock file and a process among our ancestors.
infra_lock_held_by_caller() {
  local owner="${INFRA_LOCK_OWNER:-}" pid="$PPID"
  [ -n "$owner" ] && [ "${owner#*:}" = "$INVOICING_STATE_DIR/.lock" ] || return 1
  owner="${owner%%:*}"
  [ "$owner" = "$$" ] && return 0
  while [ -n "$pid" ] && [ "$pid" -gt 1 ]; do
    [ "$pid" = "$owner" ] && return 0
    pid="$(awk '/^PPid:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)"
  done
  return 1
}

# Close every fd > 2 of the current (sub)shell, so a daemon started from here
# holds neither our lock nor a CI runner's pipes.
close_inherited_fds() {
  local path fd
  for path in "/proc/$BASHPID/fd/"*; do
    fd="${path##*/}"
    if [ "$fd" -gt 2 ] 2>/dev/null; then
      eval "exec $fd>&-" 2>/dev/null || true
    fi
  done
}

mark_started_by_us() {
  ensure_state_dirs
  grep -qx "$1" "$STARTED_BY_US_FILE" 2>/dev/null || echo "$1" >>"$STARTED_BY_US_FILE"
}
was_started_by_us() { grep -qx "$1" "$STARTED_BY_US_FILE" 2>/dev/null; }
unmark_started_by_us() {
  [ -f "$STARTED_BY_US_FILE" ] || return 0
  local rest
  rest="$(grep -vx "$1" "$STARTED_BY_US_FILE" || true)"
  if [ -n "$rest" ]; then printf '%s\n' "$rest" >"$STARTED_BY_US_FILE"; else rm -f "$STARTED_BY_US_FILE"; fi
}

# tcp_open HOST PORT: true if something accepts TCP connections there.
tcp_open() {
  # shellcheck disable=SC2016 # expanded by the inner bash
  timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$1" "$2" 2>/dev/null
}

# ---------------------------------------------------------------------------
# PostgreSQL
# ---------------------------------------------------------------------------
pg_up() { pg_isready -q -h "$PG_HOST" -p "$PG_PORT" >/dev/null 2>&1; }

pg_cluster_version() {
  # shellcheck disable=SC2012
  ls /etc/postgresql | sort -V | tail -n 1
}

pg_start_if_needed() {
  if pg_up; then
    PG_ACTION="already running"
    return 0
  fi
  command -v pg_ctlcluster >/dev/null 2>&1 || infra_die "PostgreSQL is not answering on $PG_HOST:$PG_PORT and pg_ctlcluster is not installed"
  infra_log "starting PostgreSQL"
  # shellcheck disable=SC2046
  pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start 9>&- </dev/null ||
    pg_up || infra_die "pg_ctlcluster failed to start PostgreSQL"
  local i
  for i in $(seq 1 60); do
    pg_up && break
    sleep 0.5
  done
  pg_up || infra_die "PostgreSQL did not become ready on $PG_HOST:$PG_PORT within 30 s"
  mark_started_by_us postgres
  PG_ACTION="started"
}

pg_stop() {
  infra_log "stopping PostgreSQL (started by up.sh)"
  # shellcheck disable=SC2046
  pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main stop 9>&- </dev/null || true
}

pg_bootstrap() {
  psql -h "$PG_HOST" -p "$PG_PORT" -U postgres -d postgres -X -q -v ON_ERROR_STOP=1 \
    -v dbname="$PGDATABASE_NAME" -v dev_passwords=true \
    -f "$REPO_ROOT/deploy/k8s/base/platform/postgres/bootstrap.sql" </dev/null >/dev/null
}

# ---------------------------------------------------------------------------
# Redis
# ---------------------------------------------------------------------------
redis_up() { [ "$(timeout 3 redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" ping 2>/dev/null)" = "PONG" ]; }

redis_start_if_needed() {
  if redis_up; then
    REDIS_ACTION="already running"
    return 0
  fi
  command -v redis-server >/dev/null 2>&1 || infra_die "Redis is not answering on $REDIS_HOST:$REDIS_PORT and redis-server is not installed"
  infra_log "starting Redis"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log 9>&- </dev/null >/dev/null
  local i
  for i in $(seq 1 40); do
    redis_up && break
    sleep 0.25
  done
  redis_up || infra_die "Redis did not answer PING within 10 s (see /var/log/redis/ci.log)"
  mark_started_by_us redis
  REDIS_ACTION="started"
}

redis_stop() {
  infra_log "stopping Redis (started by up.sh)"
  timeout 10 redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
}

# ---------------------------------------------------------------------------
# Redis Cluster: three primaries on 127.0.0.1:7001-7003, each with one replica (7004 follows 7001,
# 7005 follows 7002, 7006 follows 7003, as created). Nothing on disk but each node's nodes.conf
# (under $REDIS_CLUSTER_DIR/<port>/): no RDB/AOF, and replication is diskless both ways. A node
# restarted from its nodes.conf rejoins the same cluster; a former primary whose replica took over
# comes back as the replica of the promoted node and copies the data from it.
# ---------------------------------------------------------------------------

# Written to $REDIS_CLUSTER_DIR/layout once the cluster is created: state without this exact marker
# (e.g. the three masters of earlier versions, or a creation that did not finish) is discarded by start.
REDIS_CLUSTER_LAYOUT="3 primaries 7001-7003, 1 replica each: 7004>7001 7005>7002 7006>7003"

# redis_cluster_cli PORT ARGS...: redis-cli against one node (redirections not followed).
redis_cluster_cli() {
  local port="$1"
  shift
  timeout 3 redis-cli -h "$REDIS_CLUSTER_HOST" -p "$port" "$@" </dev/null 2>/dev/null
}

redis_cluster_node_up() { [ "$(redis_cluster_cli "$1" ping)" = "PONG" ]; }

redis_cluster_valid_port() {
  local port
  for port in $REDIS_CLUSTER_PORTS; do [ "$port" = "${1:-}" ] && return 0; done
  return 1
}

# The primary a replica port follows in the layout as created (7004 -> 7001, ...).
redis_cluster_home_primary() { echo $(($1 - 3)); }

# redis_cluster_info PORT FIELD: one field of the node's CLUSTER INFO (empty when the node does not
# answer or has cluster support disabled).
redis_cluster_info() {
  redis_cluster_cli "$1" cluster info | tr -d '\r' | sed -n "s/^$2://p"
}

# redis_cluster_view PORT: the cluster as that node sees it (CLUSTER NODES), one line per node:
#   port role primary-port flags link slot-ranges   e.g. "7004 slave 7001 slave connected 0"
# role is master|slave|none; primary-port is "-" for a master ("?" if unknown); the last field counts
# the slot ranges it serves. Prints nothing when the node does not answer.
redis_cluster_view() {
  redis_cluster_cli "$1" cluster nodes | tr -d '\r' | awk '
    NF >= 8 {
      n++; split($2, a, "[:@,]"); port[n] = a[2]; id[$1] = a[2]
      flags[n] = $3; of[n] = $4; link[n] = $8; slots[n] = NF - 8
    }
    END {
      for (i = 1; i <= n; i++) {
        role = "none"
        if (flags[i] ~ /(^|,)master(,|$)/) role = "master"
        if (flags[i] ~ /(^|,)slave(,|$)/) role = "slave"
        primary = of[i] == "-" ? "-" : (of[i] in id ? id[of[i]] : "?")
        print port[i], role, primary, flags[i], link[i], slots[i]
      }
    }'
}

# A node that answers, preferably one with cluster_state:ok (its view of the cluster is the one to
# trust): prints its port, or returns 1 when none answers. Ports in $1 (space separated) are skipped.
redis_cluster_viewpoint() {
  local port first=""
  for port in $REDIS_CLUSTER_PORTS; do
    case " ${1:-} " in *" $port "*) continue ;; esac
    redis_cluster_node_up "$port" || continue
    if [ "$(redis_cluster_info "$port" cluster_state)" = "ok" ]; then
      echo "$port"
      return 0
    fi
    [ -n "$first" ] || first="$port"
  done
  [ -n "$first" ] || return 1
  echo "$first"
}

# Prints why the cluster is not healthy and returns 1, or prints nothing and returns 0. Healthy: every
# node answers, reports cluster_state:ok with all 16384 slots assigned and knows all six; in every
# node's view, no node is flagged fail/pfail/handshake, three masters serve slots, each followed by
# exactly one replica, and no master is left without slots; every replica's link to its primary is
# up. Which ports are primaries does not matter: a failover (roles swapped) is still healthy.
# One redis-cli per node (CLUSTER INFO, CLUSTER NODES and INFO replication in one go): ~70 ms.
redis_cluster_problem() {
  local port problem count primaries
  count="$(wc -w <<<"$REDIS_CLUSTER_PORTS")"
  primaries="$(wc -w <<<"$REDIS_CLUSTER_PRIMARY_PORTS")"
  for port in $REDIS_CLUSTER_PORTS; do
    problem="$(printf 'CLUSTER INFO\nCLUSTER NODES\nINFO replication\n' |
      timeout 3 redis-cli -h "$REDIS_CLUSTER_HOST" -p "$port" 2>/dev/null | tr -d '\r' |
      awk -v n="$count" -v np="$primaries" '
        # CLUSTER INFO and INFO replication: key:value lines.
        /^cluster_state:/ { seen = 1; if ($0 != "cluster_state:ok") bad = bad " " $0 }
        /^cluster_slots_assigned:/ && $0 != "cluster_slots_assigned:16384" { bad = bad " " $0 }
        /^cluster_known_nodes:/ && $0 != "cluster_known_nodes:" n { bad = bad " " $0 }
        /^role:/ { role = substr($0, 6) }
        /^master_link_status:/ { link = substr($0, 20) }
        # CLUSTER NODES: id addr flags master-id ping pong epoch link [slots...]
        $1 ~ /^[0-9a-f]+$/ && length($1) == 40 && NF >= 8 {
          total++; split($2, a, "[:@,]"); port[$1] = a[2]
          if ($3 ~ /fail|handshake|noaddr/) bad = bad " " a[2] ":" $3
          else if ($8 != "connected") bad = bad " " a[2] ":" $8
          if ($3 ~ /(^|,)master(,|$)/) { if (NF > 8) replicas[$1] = 0; else orphan = orphan " " a[2] }
          else if ($3 ~ /(^|,)slave(,|$)/) follows[$1] = $4
          else bad = bad " " a[2] ":" $3
        }
        END {
          if (!seen) { print "does not answer"; exit }
          for (r in follows) {
            if (follows[r] in replicas) replicas[follows[r]]++
            else bad = bad " " port[r] ":follows-a-non-primary"
          }
          for (m in replicas) { k++; if (replicas[m] != 1) bad = bad " " port[m] ":" replicas[m] "-replicas" }
          if (total != n) bad = bad " nodes:" total
          if (k != np) bad = bad " primaries:" k
          if (orphan != "") bad = bad " masters-without-slots:" orphan
          if (role == "slave" && link != "up") bad = bad " replica-link:" link
          print substr(bad, 2)
        }')"
    if [ -n "$problem" ]; then
      echo "127.0.0.1:$port: $problem"
      return 1
    fi
  done
}

redis_cluster_ok() { redis_cluster_problem >/dev/null; }

# Pid of *our* node on PORT (its pid file names a live cluster-mode redis-server on that port), or nothing.
redis_cluster_node_pid() {
  local pid_file="$REDIS_CLUSTER_DIR/$1/redis.pid" pid
  [ -f "$pid_file" ] || return 1
  pid="$(cat "$pid_file" 2>/dev/null || true)"
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "redis-server.*:$1 \[cluster\]" || return 1
  echo "$pid"
}

redis_cluster_process_running() { [ -n "$(tr -d '\0' <"/proc/$1/cmdline" 2>/dev/null)" ]; }

# shellcheck disable=SC2094 # the log is only appended to, by redis-server and by us
redis_cluster_start_node() {
  local port="$1" dir="$REDIS_CLUSTER_DIR/$1"
  mkdir -p "$dir"
  infra_log "starting Redis Cluster node 127.0.0.1:$port ($dir)"
  # --daemonize: redis-server forks and this returns at once; a bad option fails here, into the log.
  # Replication writes no RDB file: the primary streams it (diskless sync, no delay) and the replica
  # loads it from the socket (swapdb); allow-replica-migration no keeps each replica on its primary.
  # require-full-coverage no: while one primary fails over, the others keep serving their slots
  # (ADR 0030), as production is told to run it.
  if ! (
    close_inherited_fds
    cd "$dir" || exit 1
    exec redis-server --port "$port" --bind "$REDIS_CLUSTER_HOST" \
      --cluster-enabled yes --cluster-config-file nodes.conf \
      --cluster-node-timeout "$REDIS_CLUSTER_NODE_TIMEOUT_MS" \
      --cluster-allow-replica-migration no --cluster-require-full-coverage no \
      --dir "$dir" --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" \
      --save "" --appendonly no \
      --repl-diskless-sync yes --repl-diskless-sync-delay 0 --repl-diskless-load swapdb \
      --rdb-del-sync-files yes
  ) </dev/null >>"$dir/redis.log" 2>&1; then
    tail -n 20 "$dir/redis.log" >&2
    infra_die "redis-server refused to start on 127.0.0.1:$port (log: $dir/redis.log)"
  fi
}

# redis_cluster_wait WHAT CHECK: poll CHECK until it succeeds or $REDIS_CLUSTER_START_TIMEOUT s pass.
redis_cluster_wait() {
  local what="$1" check="$2" deadline=$((SECONDS + REDIS_CLUSTER_START_TIMEOUT)) problem
  while [ "$SECONDS" -lt "$deadline" ]; do
    "$check" && return 0
    sleep 0.1
  done
  problem="$(redis_cluster_problem || true)"
  redis_cluster_status >&2 || true
  infra_die "Redis Cluster: $what within ${REDIS_CLUSTER_START_TIMEOUT}s${problem:+ ($problem)} (logs: $REDIS_CLUSTER_DIR/<port>/redis.log; 'bash tools/infra/redis-cluster.sh reset' discards its state)"
}

redis_cluster_all_up() {
  local port
  for port in $REDIS_CLUSTER_PORTS; do redis_cluster_node_up "$port" || return 1; done
}

# Cluster state of another layout (no marker, or a different one: the three masters of earlier
# versions, or a creation that did not finish) is discarded: it is a throwaway test cluster.
redis_cluster_discard_other_layout() {
  [ -d "$REDIS_CLUSTER_DIR" ] || return 0
  [ "$(cat "$REDIS_CLUSTER_DIR/layout" 2>/dev/null || true)" != "$REDIS_CLUSTER_LAYOUT" ] || return 0
  infra_log "Redis Cluster state in $REDIS_CLUSTER_DIR is not of the layout '$REDIS_CLUSTER_LAYOUT'; discarding it"
  redis_cluster_stop || infra_die "a Redis node not started by tools/infra holds one of the ports $REDIS_CLUSTER_PORTS; not discarding"
  rm -rf "$REDIS_CLUSTER_DIR"
}

# The node id a node's nodes.conf gives it (empty if it has none).
redis_cluster_conf_id() {
  awk '$3 ~ /myself/ { print $1; exit }' "$REDIS_CLUSTER_DIR/$1/nodes.conf" 2>/dev/null || true
}

# Before a stopped node is started while the rest of the cluster runs: if the others still count it
# as a primary serving slots and one of its replicas answers, wait until that replica has taken
# over (node timeout + election, ~4-6 s after the kill). The node keeps no data, so it must come
# back as a replica and copy the data from the promoted one; restarted earlier it would resume as an
# empty primary and its replica would copy the empty data set.
redis_cluster_await_takeover() {
  local port="$1" id viewer line deadline=$((SECONDS + REDIS_CLUSTER_START_TIMEOUT)) logged=false
  id="$(redis_cluster_conf_id "$port")"
  [ -n "$id" ] || return 0
  while :; do
    viewer="$(redis_cluster_viewpoint "$port")" || return 0
    # The node's own line ("id addr flags master ... slots") and whether a live node replicates it.
    line="$(redis_cluster_cli "$viewer" cluster nodes | tr -d '\r' | awk -v id="$id" '
      $1 == id && $3 ~ /master/ && NF > 8 { owns = 1 }
      $4 == id && $3 !~ /fail/ { replica = 1 }
      END { if (owns && replica) print "wait"; else print "go" }')"
    [ "$line" = "wait" ] || return 0
    if ! $logged; then
      infra_log "127.0.0.1:$port was a primary: waiting until its replica takes over its slots (it keeps no data)"
      logged=true
    fi
    [ "$SECONDS" -lt "$deadline" ] ||
      infra_die "Redis Cluster: no replica took over the slots of 127.0.0.1:$port within ${REDIS_CLUSTER_START_TIMEOUT}s; not starting it (it would come back as an empty primary)"
    sleep 0.2
  done
}

# Create the cluster from six fresh nodes: `redis-cli --cluster create` of the three primaries, then
# each replica as `redis-cli --cluster add-node R P --cluster-slave --cluster-master-id ID` does it
# (CLUSTER MEET, then CLUSTER REPLICATE once the replica knows its primary), without that tool's 1 s
# pauses. So 7004 follows 7001, 7005 7002 and 7006 7003, always.
redis_cluster_create() {
  local port primary log="$REDIS_CLUSTER_DIR/create.log" nodes=() deadline id
  for port in $REDIS_CLUSTER_PRIMARY_PORTS; do nodes+=("$REDIS_CLUSTER_HOST:$port"); done
  infra_log "creating the Redis Cluster ($REDIS_CLUSTER_LAYOUT)"
  if ! redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes </dev/null >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    infra_die "redis-cli --cluster create failed (log: $log)"
  fi
  for port in $REDIS_CLUSTER_REPLICA_PORTS; do
    primary="$(redis_cluster_home_primary "$port")"
    echo ">>> CLUSTER MEET from 127.0.0.1:$port to 127.0.0.1:$primary" >>"$log"
    [ "$(redis_cluster_cli "$port" cluster meet "$REDIS_CLUSTER_HOST" "$primary")" = "OK" ] ||
      infra_die "CLUSTER MEET from 127.0.0.1:$port to 127.0.0.1:$primary failed"
  done
  deadline=$((SECONDS + REDIS_CLUSTER_START_TIMEOUT))
  for port in $REDIS_CLUSTER_REPLICA_PORTS; do
    primary="$(redis_cluster_home_primary "$port")"
    id="$(redis_cluster_cli "$primary" cluster myid | tr -d '\r')"
    [ -n "$id" ] || infra_die "127.0.0.1:$primary did not tell its node id"
    until redis_cluster_cli "$port" cluster nodes | grep -q "^$id "; do
      [ "$SECONDS" -lt "$deadline" ] || infra_die "127.0.0.1:$port did not learn of 127.0.0.1:$primary within ${REDIS_CLUSTER_START_TIMEOUT}s"
      sleep 0.05
    done
    echo ">>> CLUSTER REPLICATE $id (127.0.0.1:$primary) on 127.0.0.1:$port" >>"$log"
    [ "$(redis_cluster_cli "$port" cluster replicate "$id")" = "OK" ] ||
      infra_die "CLUSTER REPLICATE of 127.0.0.1:$primary on 127.0.0.1:$port failed"
  done
  echo "$REDIS_CLUSTER_LAYOUT" >"$REDIS_CLUSTER_DIR/layout"
}

# Start the six nodes (those not running), create the cluster the first time (fresh nodes only:
# nodes that reloaded their nodes.conf rejoin by themselves, whatever their role now) and wait until
# it is healthy (redis_cluster_problem). Sets REDIS_CLUSTER_ACTION to "already running", "started" or
# "created".
redis_cluster_start() {
  if redis_cluster_ok; then
    REDIS_CLUSTER_ACTION="already running"
    return 0
  fi
  if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
    infra_die "redis-server and redis-cli are required for the Redis Cluster"
  fi
  ensure_state_dirs
  redis_cluster_discard_other_layout
  local port fresh=0 count=0 down=()
  for port in $REDIS_CLUSTER_PORTS; do
    count=$((count + 1))
    if redis_cluster_node_up "$port"; then
      [ -n "$(redis_cluster_info "$port" cluster_state)" ] ||
        infra_die "127.0.0.1:$port answers PING but is not a cluster-enabled Redis"
    elif tcp_open "$REDIS_CLUSTER_HOST" "$port"; then
      infra_die "127.0.0.1:$port is taken by something that does not answer as Redis"
    else
      down+=("$port")
    fi
  done
  if [ "${#down[@]}" -gt 0 ] && [ "${#down[@]}" -lt "$count" ]; then
    # Part of the cluster runs (e.g. a node was killed): don't bring back an empty primary.
    for port in "${down[@]}"; do redis_cluster_await_takeover "$port"; done
  fi
  for port in "${down[@]}"; do redis_cluster_start_node "$port"; done
  redis_cluster_wait "the nodes did not answer PING" redis_cluster_all_up
  for port in $REDIS_CLUSTER_PORTS; do
    if [ "$(redis_cluster_info "$port" cluster_known_nodes)" = "1" ] &&
      [ "$(redis_cluster_info "$port" cluster_slots_assigned)" = "0" ]; then
      fresh=$((fresh + 1))
    fi
  done
  REDIS_CLUSTER_ACTION="started"
  if [ "$fresh" -eq "$count" ]; then
    redis_cluster_create
    REDIS_CLUSTER_ACTION="created"
  elif [ "$fresh" -gt 0 ]; then
    infra_die "Redis Cluster: $fresh node(s) have no cluster state while the others do; 'bash tools/infra/redis-cluster.sh reset' discards it all and creates a new cluster"
  fi
  redis_cluster_wait "the cluster did not become healthy" redis_cluster_ok
}

# Stop one of our nodes (SHUTDOWN NOSAVE; nodes.conf stays). Returns 1 if the port is held by a
# process tools/infra did not start (left alone).
redis_cluster_stop_node() {
  local port="$1" pid deadline
  if pid="$(redis_cluster_node_pid "$port")"; then
    infra_log "stopping Redis Cluster node 127.0.0.1:$port (pid $pid)"
    redis_cluster_cli "$port" shutdown nosave >/dev/null || true
    # Gone once its port is closed and the process has exited (an unreaped zombie has no cmdline).
    deadline=$((SECONDS + 10))
    while { redis_cluster_process_running "$pid" || tcp_open "$REDIS_CLUSTER_HOST" "$port"; } &&
      [ "$SECONDS" -lt "$deadline" ]; do
      sleep 0.05
    done
    if redis_cluster_process_running "$pid"; then
      infra_log "node 127.0.0.1:$port did not exit within 10 s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 0.2
    fi
    rm -f "$REDIS_CLUSTER_DIR/$port/redis.pid"
  elif tcp_open "$REDIS_CLUSTER_HOST" "$port"; then
    infra_log "something answers on 127.0.0.1:$port but was not started by tools/infra (no pid); leaving it alone"
    return 1
  fi
}

# Stop our nodes, replicas first (a primary then has no replica to wait for). The layout stays
# (nodes.conf), the data does not. Nodes not started by tools/infra are left alone: returns 1 then.
redis_cluster_stop() {
  local port foreign=0 replicas="" others=""
  for port in $REDIS_CLUSTER_PORTS; do
    if [ "$(redis_cluster_cli "$port" role | head -n 1 | tr -d '\r')" = "slave" ]; then
      replicas="$replicas $port"
    else
      others="$others $port"
    fi
  done
  for port in $replicas $others; do
    redis_cluster_stop_node "$port" || foreign=1
  done
  return "$foreign"
}

# kill -9 one node (the fault trial): by its pid file, so only a node tools/infra started.
redis_cluster_kill() {
  local port="$1" pid
  redis_cluster_valid_port "$port" || infra_die "not a Redis Cluster port: '$port' (one of $REDIS_CLUSTER_PORTS)"
  if ! pid="$(redis_cluster_node_pid "$port")"; then
    if tcp_open "$REDIS_CLUSTER_HOST" "$port"; then
      infra_die "127.0.0.1:$port answers but has no pid file of ours ($REDIS_CLUSTER_DIR/$port/redis.pid); not killing it"
    fi
    infra_die "Redis Cluster node 127.0.0.1:$port is not running"
  fi
  kill_and_wait "$pid" redis_cluster_process_running "redis-server pid $pid (127.0.0.1:$port)"
  rm -f "$REDIS_CLUSTER_DIR/$port/redis.pid"
  infra_log "killed Redis Cluster node 127.0.0.1:$port (pid $pid, SIGKILL)"
}

# Start one stopped node again (after kill or stop) and wait until it answers and the cluster is
# healthy. A former primary first waits for its replica to take over (redis_cluster_await_takeover).
# Sets REDIS_CLUSTER_ACTION to "already running" or "started".
redis_cluster_start_one() {
  local port="$1"
  redis_cluster_valid_port "$port" || infra_die "not a Redis Cluster port: '$port' (one of $REDIS_CLUSTER_PORTS)"
  REDIS_CLUSTER_ACTION="already running"
  if ! redis_cluster_node_up "$port"; then
    if tcp_open "$REDIS_CLUSTER_HOST" "$port"; then
      infra_die "127.0.0.1:$port is taken by something that does not answer as Redis"
    fi
    [ -n "$(redis_cluster_conf_id "$port")" ] ||
      infra_die "127.0.0.1:$port has no nodes.conf in $REDIS_CLUSTER_DIR/$port: it never was part of the cluster ('bash tools/infra/redis-cluster.sh start')"
    redis_cluster_viewpoint "$port" >/dev/null ||
      infra_die "no other node of the Redis Cluster answers; start the whole cluster: bash tools/infra/redis-cluster.sh start"
    redis_cluster_await_takeover "$port"
    redis_cluster_start_node "$port"
    local deadline=$((SECONDS + REDIS_CLUSTER_START_TIMEOUT))
    until redis_cluster_node_up "$port"; do
      [ "$SECONDS" -lt "$deadline" ] || infra_die "127.0.0.1:$port did not answer PING within ${REDIS_CLUSTER_START_TIMEOUT}s (log: $REDIS_CLUSTER_DIR/$port/redis.log)"
      sleep 0.05
    done
    REDIS_CLUSTER_ACTION="started"
  fi
  redis_cluster_wait "the cluster did not become healthy" redis_cluster_ok
}

redis_cluster_role() { redis_cluster_cli "$1" role | head -n 1 | tr -d '\r'; }

# Bring back the layout as created: every one of 7001-7003 that is a replica now (after a failover)
# takes its primary role back with CLUSTER FAILOVER (coordinated with its primary: no write is lost),
# then every replica port that follows another primary than its own is moved back with CLUSTER
# REPLICATE. Waits for a healthy cluster before and after.
redis_cluster_rebalance_roles() {
  local port primary id changed=0 deadline
  redis_cluster_wait "the cluster is not healthy (rebalance needs every replica in sync)" redis_cluster_ok
  for port in $REDIS_CLUSTER_PRIMARY_PORTS; do
    [ "$(redis_cluster_role "$port")" = "slave" ] || continue
    infra_log "CLUSTER FAILOVER on 127.0.0.1:$port (a replica now; it was created as a primary)"
    [ "$(redis_cluster_cli "$port" cluster failover)" = "OK" ] || infra_die "CLUSTER FAILOVER on 127.0.0.1:$port was refused"
    changed=$((changed + 1))
  done
  deadline=$((SECONDS + REDIS_CLUSTER_START_TIMEOUT))
  for port in $REDIS_CLUSTER_PRIMARY_PORTS; do
    until [ "$(redis_cluster_role "$port")" = "master" ]; do
      [ "$SECONDS" -lt "$deadline" ] || infra_die "127.0.0.1:$port did not become a primary within ${REDIS_CLUSTER_START_TIMEOUT}s"
      sleep 0.05
    done
  done
  for port in $REDIS_CLUSTER_REPLICA_PORTS; do
    primary="$(redis_cluster_home_primary "$port")"
    if [ "$(redis_cluster_view "$port" | awk '$4 ~ /myself/ { print $2, $3 }')" != "slave $primary" ]; then
      id="$(redis_cluster_cli "$primary" cluster myid | tr -d '\r')"
      infra_log "CLUSTER REPLICATE 127.0.0.1:$primary on 127.0.0.1:$port"
      [ "$(redis_cluster_cli "$port" cluster replicate "$id")" = "OK" ] || infra_die "CLUSTER REPLICATE on 127.0.0.1:$port was refused"
      changed=$((changed + 1))
    fi
  done
  REDIS_CLUSTER_ACTION="unchanged"
  [ "$changed" -eq 0 ] || REDIS_CLUSTER_ACTION="rebalanced ($changed change(s))"
  redis_cluster_wait "the cluster did not become healthy after the role changes" redis_cluster_ok
}

# One line per node, in port order: "PORT ROLE PRIMARY-PORT STATE", e.g. "7001 master - ok",
# "7004 slave 7001 ok". Roles come from the view of a healthy node (redis_cluster_viewpoint);
# STATE is ok, down (does not answer PING), fail / pfail / handshake (as the cluster flags it) or
# unknown (not in the view). Returns 3 when no node answers.
redis_cluster_nodes() {
  local viewer view port line role primary flags state
  viewer="$(redis_cluster_viewpoint "")" || {
    echo "redis-cluster: stopped" >&2
    return 3
  }
  view="$(redis_cluster_view "$viewer")"
  for port in $REDIS_CLUSTER_PORTS; do
    line="$(awk -v p="$port" '$1 == p { print $2, $3, $4; exit }' <<<"$view")"
    if [ -z "$line" ]; then
      role="?" primary="-" state="unknown"
    else
      read -r role primary flags <<<"$line"
      case ",$flags," in
        *,fail\?,*) state="pfail" ;;
        *,fail,*) state="fail" ;;
        *,handshake,*) state="handshake" ;;
        *) state="ok" ;;
      esac
    fi
    redis_cluster_node_up "$port" || state="down"
    echo "$port $role $primary $state"
  done
}

redis_cluster_status() {
  if redis_cluster_ok; then
    echo "redis-cluster: running, healthy (cluster_state:ok, 3 primaries with one replica each): $REDIS_CLUSTER_URL (state $REDIS_CLUSTER_DIR)"
    redis_cluster_nodes | sed 's/^/  /'
    return 0
  fi
  local port state any=false line=""
  for port in $REDIS_CLUSTER_PORTS; do
    if redis_cluster_node_up "$port"; then
      any=true
      state="$(redis_cluster_info "$port" cluster_state || true)"
      line="$line $port:${state:-not-a-cluster-node}"
    else
      line="$line $port:down"
    fi
  done
  if $any; then
    echo "redis-cluster: not healthy (node:cluster_state)$line: $(redis_cluster_problem)"
    redis_cluster_nodes | sed 's/^/  /'
    return 2
  fi
  echo "redis-cluster: stopped"
  return 3
}

# ---------------------------------------------------------------------------
# Kafka
# ---------------------------------------------------------------------------

# Download the broker jars once into the cache (atomic: a half-finished
# download never looks complete).
kafka_ensure_libs() {
  if [ -f "$KAFKA_LIBS/.complete" ]; then
    return 0
  fi
  command -v mvn >/dev/null 2>&1 || infra_die "mvn is required to fetch Kafka $KAFKA_VERSION (or pre-populate $KAFKA_LIBS)"
  infra_log "fetching Kafka $KAFKA_VERSION from Maven Central into $KAFKA_LIBS"
  mkdir -p "$KAFKA_HOME"
  local tmp="$KAFKA_HOME/libs.tmp.$$"
  rm -rf "$tmp"
  local mvn_log="$KAFKA_HOME/maven.log"
  if ! mvn -q -B -Dstyle.color=never -f "$INFRA_DIR/kafka/pom.xml" dependency:copy-dependencies \
    -Dkafka.version="$KAFKA_VERSION" -DincludeScope=runtime -DoutputDirectory="$tmp" </dev/null >"$mvn_log" 2>&1; then
    tail -n 30 "$mvn_log" >&2
    rm -rf "$tmp"
    infra_die "Maven could not fetch org.apache.kafka:kafka_2.13:$KAFKA_VERSION (full log: $mvn_log)"
  fi
  ls "$tmp"/kafka_2.13-"$KAFKA_VERSION".jar >/dev/null 2>&1 || infra_die "kafka_2.13-$KAFKA_VERSION.jar missing after Maven run"
  touch "$tmp/.complete"
  rm -rf "$KAFKA_LIBS"
  mv "$tmp" "$KAFKA_LIBS"
}

# kafka_java MAIN_CLASS ARGS... : run a Kafka CLI class from the cached jars.
kafka_java() {
  java -Xms64m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto \
    -Dlog4j2.configurationFile="$KAFKA_LOG4J" -Dinvoicing.kafka.log.level=WARN \
    -cp "$KAFKA_LIBS/*" "$@" </dev/null
}

kafka_render_config() {
  ensure_state_dirs
  local tmp="$KAFKA_CONF.tmp.$$"
  sed "s#@KAFKA_DATA_DIR@#$KAFKA_DATA_DIR#g" "$INFRA_DIR/kafka/server.properties" >"$tmp"
  if [ -f "$KAFKA_CONF" ] && cmp -s "$tmp" "$KAFKA_CONF"; then
    rm -f "$tmp"
  else
    mv "$tmp" "$KAFKA_CONF"
  fi
}

# Format the KRaft log dir only if it has never been formatted.
kafka_format_if_needed() {
  if [ -f "$KAFKA_DATA_DIR/meta.properties" ]; then
    return 0
  fi
  mkdir -p "$KAFKA_DATA_DIR"
  local cluster_id
  cluster_id="$(kafka_java kafka.tools.StorageTool random-uuid | tail -n 1)"
  [ -n "$cluster_id" ] || infra_die "kafka-storage random-uuid produced no id"
  infra_log "formatting Kafka log dir $KAFKA_DATA_DIR (cluster id $cluster_id)"
  if ! kafka_java kafka.tools.StorageTool format --ignore-formatted \
    --cluster-id "$cluster_id" --config "$KAFKA_CONF" >"$INFRA_LOG_DIR/kafka-format.log" 2>&1; then
    cat "$INFRA_LOG_DIR/kafka-format.log" >&2
    infra_die "kafka-storage format failed"
  fi
  echo "$cluster_id" >"$INVOICING_STATE_DIR/kafka-cluster-id"
}

# Sends a Kafka Metadata request (v4, all topics, no auto-creation) and checks
# that the broker answers with our correlation id and at least one registered
# broker. A KRaft broker only opens its PLAINTEXT listener once it has caught
# up with the metadata log, so this means "ready for clients".
# Metadata v4 is the oldest version Kafka 4.x still accepts (KIP-896).
kafka_metadata_ok() { kafka_metadata_ok_at "$KAFKA_HOST" "$KAFKA_PORT"; }

# kafka_metadata_ok_at HOST PORT: the same for any broker address.
kafka_metadata_ok_at() {
  local out
  # shellcheck disable=SC2016 # expanded by the inner bash
  out="$(timeout 5 bash -c '
      exec 3<>"/dev/tcp/$1/$2" || exit 1
      # size=20 | api_key=3 api_version=4 correlation_id="INVC" client_id="infra" | topics=null allow_auto=false
      printf "\x00\x00\x00\x14\x00\x03\x00\x04INVC\x00\x05infra\xff\xff\xff\xff\x00" >&3
      head -c 16 <&3 | od -An -v -tx1
    ' _ "$1" "$2" 2>/dev/null)" || return 1
  # shellcheck disable=SC2206
  local b=($out)
  [ "${#b[@]}" -ge 16 ] || return 1
  # bytes 4..7 = correlation id, 12..15 = broker count
  [ "${b[4]}${b[5]}${b[6]}${b[7]}" = "494e5643" ] || return 1
  [ "${b[12]}${b[13]}${b[14]}${b[15]}" != "00000000" ]
}

# kafka_metadata_at HOST PORT: the same Metadata v4 request (all topics, internal ones included),
# with the whole answer decoded, one line per item:
#   broker ID HOST PORT                                     (registered, unfenced brokers)
#   controller ID
#   topic NAME ERROR_CODE PARTITIONS
#   partition TOPIC INDEX ERROR_CODE LEADER REPLICAS ISR    (REPLICAS/ISR comma separated, "-" if empty)
# Returns 1 if the broker does not answer (or answers something else).
kafka_metadata_at() {
  local out
  # shellcheck disable=SC2016 # expanded by the inner bash
  out="$(timeout 5 bash -c '
      exec 3<>"/dev/tcp/$1/$2" || exit 1
      printf "\x00\x00\x00\x14\x00\x03\x00\x04INVC\x00\x05infra\xff\xff\xff\xff\x00" >&3
      size="$(head -c 4 <&3 | od -An -tu4 --endian=big | tr -d " ")"
      [ -n "$size" ] && [ "$size" -gt 8 ] && [ "$size" -lt 67108864 ] || exit 1
      head -c "$size" <&3 | od -An -v -tu1
    ' _ "$1" "$2" 2>/dev/null)" || return 1
  # Response v4: correlation_id throttle_ms [brokers: node_id host port rack] cluster_id controller_id
  # [topics: error name is_internal [partitions: error index leader [replicas] [isr]]]
  # (int16 strings, int32 array lengths, big-endian).
  awk '
    function i16(  v) { v = b[p] * 256 + b[p + 1]; p += 2; return v >= 32768 ? v - 65536 : v }
    function i32(  v) {
      v = ((b[p] * 256 + b[p + 1]) * 256 + b[p + 2]) * 256 + b[p + 3]; p += 4
      return v >= 2147483648 ? v - 4294967296 : v
    }
    function str(  len, s, k) {
      len = i16(); if (len < 0) return "-"
      s = ""; for (k = 0; k < len; k++) s = s sprintf("%c", b[p + k])
      p += len; return s
    }
    function ids(  c, k, s) { c = i32(); s = ""; for (k = 0; k < c; k++) s = s (k ? "," : "") i32(); return s == "" ? "-" : s }
    { for (i = 1; i <= NF; i++) b[n++] = $i + 0 }
    END {
      p = 0
      if (n < 16 || i32() != 1229870659) exit 1 # correlation id "INVC"
      i32()
      nb = i32()
      for (k = 0; k < nb; k++) { id = i32(); host = str(); port = i32(); str(); print "broker", id, host, port }
      str(); print "controller", i32()
      nt = i32()
      for (t = 0; t < nt; t++) {
        err = i16(); name = str(); p++; np = i32()
        print "topic", name, err, np
        for (q = 0; q < np; q++) {
          err = i16(); idx = i32(); leader = i32(); reps = ids(); isr = ids()
          print "partition", name, idx, err, leader, reps, isr
        }
      }
      if (p > n) exit 1
    }' <<<"$out"
}

# kill_and_wait PID ALIVE WHAT: kill -9 PID (a fault trial) and wait up to 5 s until `ALIVE PID`
# fails; dies naming WHAT if it does not.
kill_and_wait() {
  local pid="$1" alive="$2" what="$3" i
  kill -KILL "$pid" 2>/dev/null || true
  for i in $(seq 1 100); do
    "$alive" "$pid" || return 0
    sleep 0.05
  done
  infra_die "$what survived SIGKILL"
}

# kafka_pid_of CONF PID_FILE: pid of the broker running kafka.Kafka with CONF, or nothing. The pid
# file is trusted only while it names such a process, and rewritten when the process is found by
# its command line (the pid file lost or stale) and its folder still exists.
kafka_pid_of() {
  local conf="$1" pid_file="$2" pid=""
  if [ -f "$pid_file" ]; then
    pid="$(cat "$pid_file" 2>/dev/null || true)"
    if [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] &&
      tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "kafka.Kafka $conf"; then
      echo "$pid"
      return 0
    fi
  fi
  pid="$(pgrep -f "kafka\.Kafka $conf\$" 2>/dev/null | head -n 1 || true)"
  if [ -n "$pid" ]; then
    [ -d "$(dirname "$pid_file")" ] && echo "$pid" >"$pid_file"
    echo "$pid"
    return 0
  fi
  rm -f "$pid_file"
  return 1
}

# Pid of *our* broker (the one running with $KAFKA_CONF), or nothing.
kafka_pid() { kafka_pid_of "$KAFKA_CONF" "$KAFKA_PID_FILE"; }

kafka_log_tail() {
  if [ -f "$KAFKA_LOG" ]; then
    echo "----- last 40 lines of $KAFKA_LOG -----" >&2
    tail -n 40 "$KAFKA_LOG" >&2
    echo "-----" >&2
  fi
}

kafka_wait_ready() {
  local pid="${1:-}" deadline=$((SECONDS + KAFKA_START_TIMEOUT))
  while [ "$SECONDS" -lt "$deadline" ]; do
    if kafka_metadata_ok; then
      return 0
    fi
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
      kafka_log_tail
      infra_die "Kafka broker (pid $pid) exited during startup"
    fi
    sleep 0.5
  done
  kafka_log_tail
  infra_die "Kafka broker did not answer metadata requests on $KAFKA_BOOTSTRAP within ${KAFKA_START_TIMEOUT}s (log: $KAFKA_LOG)"
}

# Start the broker unless something already answers on 127.0.0.1:9092.
# Sets KAFKA_ACTION to "already running" or "started".
kafka_start() {
  if kafka_metadata_ok; then
    KAFKA_ACTION="already running"
    return 0
  fi
  local pid
  if pid="$(kafka_pid)"; then
    infra_log "Kafka broker (pid $pid) is starting; waiting"
    kafka_wait_ready "$pid"
    KAFKA_ACTION="already running"
    return 0
  fi
  if tcp_open "$KAFKA_HOST" "$KAFKA_PORT"; then
    # Port taken but no metadata answer: maybe a foreign broker still starting.
    infra_log "something listens on $KAFKA_BOOTSTRAP but is not (yet) a ready broker; waiting"
    kafka_wait_ready ""
    KAFKA_ACTION="already running"
    return 0
  fi
  command -v java >/dev/null 2>&1 || infra_die "java (17+) is required to run the Kafka broker"
  kafka_ensure_libs
  kafka_render_config
  kafka_format_if_needed
  ensure_state_dirs
  infra_log "starting Kafka $KAFKA_VERSION broker (log: $KAFKA_LOG)"
  # Keep one previous log once it passes ~50 MB.
  if [ -f "$KAFKA_LOG" ] && [ "$(stat -c %s "$KAFKA_LOG")" -gt 52428800 ]; then
    mv -f "$KAFKA_LOG" "$KAFKA_LOG.1"
  fi
  echo "===== $(date -u +%Y-%m-%dT%H:%M:%SZ) starting Kafka $KAFKA_VERSION =====" >>"$KAFKA_LOG"
  # shellcheck disable=SC2086
  (
    close_inherited_fds
    cd "$KAFKA_HOME" || exit 1
    exec setsid nohup java $KAFKA_HEAP_OPTS -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
      -Djava.awt.headless=true \
      -Dlog4j2.configurationFile="$KAFKA_LOG4J" \
      -cp "$KAFKA_LIBS/*" kafka.Kafka "$KAFKA_CONF"
  ) </dev/null >>"$KAFKA_LOG" 2>&1 &
  pid=$!
  echo "$pid" >"$KAFKA_PID_FILE"
  # setsid forks if it happens to be a process-group leader: re-resolve then.
  sleep 0.2
  if ! tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "kafka.Kafka"; then
    pid="$(kafka_pid || true)"
  fi
  kafka_wait_ready "$pid"
  KAFKA_ACTION="started"
}

# Stop our broker: SIGTERM (controlled shutdown), wait, then SIGKILL.
kafka_stop() {
  local pid
  if ! pid="$(kafka_pid)"; then
    if tcp_open "$KAFKA_HOST" "$KAFKA_PORT"; then
      infra_log "a Kafka broker answers on $KAFKA_BOOTSTRAP but was not started by tools/infra (no pid); leaving it alone"
      return 1
    fi
    infra_log "Kafka broker is not running"
    return 0
  fi
  infra_log "stopping Kafka broker (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + KAFKA_STOP_TIMEOUT))
  while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do
    sleep 0.3
  done
  if kill -0 "$pid" 2>/dev/null; then
    infra_log "broker did not exit within ${KAFKA_STOP_TIMEOUT}s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    local _
    for _ in $(seq 1 20); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.25
    done
  fi
  rm -f "$KAFKA_PID_FILE"
  local _
  for _ in $(seq 1 20); do
    tcp_open "$KAFKA_HOST" "$KAFKA_PORT" || return 0
    sleep 0.25
  done
  infra_die "port $KAFKA_PORT still answers after stopping the broker"
}

kafka_status() {
  local pid=""
  pid="$(kafka_pid || true)"
  if kafka_metadata_ok; then
    echo "kafka: running on $KAFKA_BOOTSTRAP${pid:+ (pid $pid)} version $KAFKA_VERSION data $KAFKA_DATA_DIR"
    return 0
  fi
  if [ -n "$pid" ]; then
    echo "kafka: process $pid alive but not answering on $KAFKA_BOOTSTRAP (starting or stopping?)"
    return 2
  fi
  echo "kafka: stopped"
  return 3
}

# Creates a topic of 6 partitions if absent, with the given topic configs (`cleanup.policy=...`,
# `retention.ms=...`). An existing topic is left as it is, including its retention.ms: change that
# with kafka-configs / ConfigCommand.
kafka_create_topic() { kafka_create_topic_on "$KAFKA_BOOTSTRAP" 1 "$@"; }

# kafka_create_topic_on BOOTSTRAP REPLICATION_FACTOR TOPIC CONFIG...: the same on any cluster.
kafka_create_topic_on() {
  local bootstrap="$1" rf="$2" topic="$3" out config
  shift 3
  local configs=()
  for config in "$@"; do configs+=(--config "$config"); done
  if ! out="$(kafka_java org.apache.kafka.tools.TopicCommand --bootstrap-server "$bootstrap" \
    --create --if-not-exists --topic "$topic" \
    --partitions 6 --replication-factor "$rf" "${configs[@]}" 2>&1)"; then
    printf '%s\n' "$out" >&2
    infra_die "could not create topic $topic"
  fi
  # Drop the tool's generic "period or underscore" metric-name warning.
  out="$(printf '%s\n' "$out" | grep -v "^WARNING: Due to limitations in metric names" || true)"
  if [ -n "$out" ]; then
    printf '%s\n' "$out" | sed 's/^/[kafka-topics] /' >&2
  fi
}
