# shellcheck shell=bash
# Shared helpers for tools/infra/{up,down,kafka,redis-cluster}.sh. Source it; don't run it.
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
# A three-master Redis Cluster beside the single Redis (the auth service runs on both; ADR 0018).
REDIS_CLUSTER_HOST=127.0.0.1
REDIS_CLUSTER_PORTS="7001 7002 7003"
REDIS_CLUSTER_URL="redis-cluster://127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003"
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
infra_lock() {
  ensure_state_dirs
  command -v flock >/dev/null 2>&1 || return 0
  exec 9>"$INVOICING_STATE_DIR/.lock"
  if ! flock -w 180 9; then
    infra_die "another tools/infra script holds $INVOICING_STATE_DIR/.lock for > 180 s"
  fi
}

# Close every fd > 2 of the current (sub)shell, so a daemon started from here
# holds neither our lock nor a CI runner's pipes.
close_inherited_fds() {
  local fd
  for fd in $(ls /proc/$BASHPID/fd 2>/dev/null); do
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
    -f "$INFRA_DIR/postgres/bootstrap.sql" </dev/null >/dev/null
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
# Redis Cluster: three masters on 127.0.0.1:7001-7003, no replicas, nothing on disk but each
# node's nodes.conf (under $REDIS_CLUSTER_DIR/<port>/), so a restart rejoins the same cluster.
# ---------------------------------------------------------------------------

# redis_cluster_cli PORT ARGS...: redis-cli against one node (redirections not followed).
redis_cluster_cli() {
  local port="$1"
  shift
  timeout 3 redis-cli -h "$REDIS_CLUSTER_HOST" -p "$port" "$@" </dev/null 2>/dev/null
}

redis_cluster_node_up() { [ "$(redis_cluster_cli "$1" ping)" = "PONG" ]; }

# redis_cluster_info PORT FIELD: one field of the node's CLUSTER INFO (empty when the node does not
# answer or has cluster support disabled).
redis_cluster_info() {
  redis_cluster_cli "$1" cluster info | tr -d '\r' | sed -n "s/^$2://p"
}

# True when every node answers, knows all three and reports cluster_state:ok with every slot assigned.
redis_cluster_ok() {
  local port info count
  count="$(echo $REDIS_CLUSTER_PORTS | wc -w)"
  for port in $REDIS_CLUSTER_PORTS; do
    info="$(redis_cluster_cli "$port" cluster info | tr -d '\r')" || return 1
    grep -qx 'cluster_state:ok' <<<"$info" || return 1
    grep -qx 'cluster_slots_assigned:16384' <<<"$info" || return 1
    grep -qx "cluster_known_nodes:$count" <<<"$info" || return 1
  done
}

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

redis_cluster_start_node() {
  local port="$1" dir="$REDIS_CLUSTER_DIR/$1"
  mkdir -p "$dir"
  infra_log "starting Redis Cluster node 127.0.0.1:$port ($dir)"
  # --daemonize: redis-server forks and this returns at once; a bad option fails here, into the log.
  if ! (
    close_inherited_fds
    cd "$dir"
    exec redis-server --port "$port" --bind "$REDIS_CLUSTER_HOST" \
      --cluster-enabled yes --cluster-config-file nodes.conf \
      --cluster-node-timeout "$REDIS_CLUSTER_NODE_TIMEOUT_MS" \
      --dir "$dir" --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" \
      --save "" --appendonly no
  ) </dev/null >>"$dir/redis.log" 2>&1; then
    tail -n 20 "$dir/redis.log" >&2
    infra_die "redis-server refused to start on 127.0.0.1:$port (log: $dir/redis.log)"
  fi
}

redis_cluster_wait() {
  local what="$1" check="$2" deadline=$((SECONDS + REDIS_CLUSTER_START_TIMEOUT))
  while [ "$SECONDS" -lt "$deadline" ]; do
    "$check" && return 0
    sleep 0.1
  done
  redis_cluster_status >&2 || true
  infra_die "Redis Cluster: $what within ${REDIS_CLUSTER_START_TIMEOUT}s (logs: $REDIS_CLUSTER_DIR/<port>/redis.log; 'bash tools/infra/redis-cluster.sh reset' discards its state)"
}

redis_cluster_all_up() {
  local port
  for port in $REDIS_CLUSTER_PORTS; do redis_cluster_node_up "$port" || return 1; done
}

# Start the three nodes (those not running), create the cluster the first time (fresh nodes only:
# nodes that reloaded their nodes.conf rejoin by themselves) and wait for cluster_state:ok.
# Sets REDIS_CLUSTER_ACTION to "already running", "started" or "created".
redis_cluster_start() {
  if redis_cluster_ok; then
    REDIS_CLUSTER_ACTION="already running"
    return 0
  fi
  command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 ||
    infra_die "redis-server and redis-cli are required for the Redis Cluster"
  ensure_state_dirs
  local port fresh=0 count=0
  for port in $REDIS_CLUSTER_PORTS; do
    count=$((count + 1))
    if redis_cluster_node_up "$port"; then
      [ -n "$(redis_cluster_info "$port" cluster_state)" ] ||
        infra_die "127.0.0.1:$port answers PING but is not a cluster-enabled Redis"
    elif tcp_open "$REDIS_CLUSTER_HOST" "$port"; then
      infra_die "127.0.0.1:$port is taken by something that does not answer as Redis"
    else
      redis_cluster_start_node "$port"
    fi
  done
  redis_cluster_wait "the nodes did not answer PING" redis_cluster_all_up
  for port in $REDIS_CLUSTER_PORTS; do
    if [ "$(redis_cluster_info "$port" cluster_known_nodes)" = "1" ] &&
      [ "$(redis_cluster_info "$port" cluster_slots_assigned)" = "0" ]; then
      fresh=$((fresh + 1))
    fi
  done
  REDIS_CLUSTER_ACTION="started"
  if [ "$fresh" -eq "$count" ]; then
    infra_log "creating the Redis Cluster (3 masters, no replicas)"
    local nodes=() log="$REDIS_CLUSTER_DIR/create.log"
    for port in $REDIS_CLUSTER_PORTS; do nodes+=("$REDIS_CLUSTER_HOST:$port"); done
    if ! redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes </dev/null >"$log" 2>&1; then
      tail -n 30 "$log" >&2
      infra_die "redis-cli --cluster create failed (log: $log)"
    fi
    REDIS_CLUSTER_ACTION="created"
  elif [ "$fresh" -gt 0 ]; then
    infra_die "Redis Cluster: $fresh node(s) have no cluster state while the others do; 'bash tools/infra/redis-cluster.sh reset' discards it all and creates a new cluster"
  fi
  redis_cluster_wait "cluster_state did not become ok" redis_cluster_ok
}

# Stop our nodes (SHUTDOWN NOSAVE; nodes.conf stays, so the next start rejoins the same cluster).
# Nodes not started by tools/infra (no matching pid file) are left alone: returns 1 then.
redis_cluster_stop() {
  local port pid foreign=0 deadline
  for port in $REDIS_CLUSTER_PORTS; do
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
      foreign=1
    fi
  done
  return "$foreign"
}

redis_cluster_status() {
  if redis_cluster_ok; then
    echo "redis-cluster: running, cluster_state:ok, 3 masters: $REDIS_CLUSTER_URL (state $REDIS_CLUSTER_DIR)"
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
    echo "redis-cluster: not ok (node:cluster_state)$line"
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
kafka_metadata_ok() {
  local out
  out="$(timeout 5 bash -c '
      exec 3<>"/dev/tcp/$1/$2" || exit 1
      # size=20 | api_key=3 api_version=4 correlation_id="INVC" client_id="infra" | topics=null allow_auto=false
      printf "\x00\x00\x00\x14\x00\x03\x00\x04INVC\x00\x05infra\xff\xff\xff\xff\x00" >&3
      head -c 16 <&3 | od -An -v -tx1
    ' _ "$KAFKA_HOST" "$KAFKA_PORT" 2>/dev/null)" || return 1
  # shellcheck disable=SC2206
  local b=($out)
  [ "${#b[@]}" -ge 16 ] || return 1
  # bytes 4..7 = correlation id, 12..15 = broker count
  [ "${b[4]}${b[5]}${b[6]}${b[7]}" = "494e5643" ] || return 1
  [ "${b[12]}${b[13]}${b[14]}${b[15]}" != "00000000" ]
}

# Pid of *our* broker (the one running with $KAFKA_CONF), or nothing.
kafka_pid() {
  local pid=""
  if [ -f "$KAFKA_PID_FILE" ]; then
    pid="$(cat "$KAFKA_PID_FILE" 2>/dev/null || true)"
    if [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] &&
      tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "kafka.Kafka $KAFKA_CONF"; then
      echo "$pid"
      return 0
    fi
  fi
  # Pid file lost/stale: look for a broker started with exactly our config.
  pid="$(pgrep -f "kafka\.Kafka $KAFKA_CONF\$" 2>/dev/null | head -n 1 || true)"
  if [ -n "$pid" ]; then
    echo "$pid" >"$KAFKA_PID_FILE"
    echo "$pid"
    return 0
  fi
  rm -f "$KAFKA_PID_FILE"
  return 1
}

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
    cd "$KAFKA_HOME"
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
    local i
    for i in $(seq 1 20); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.25
    done
  fi
  rm -f "$KAFKA_PID_FILE"
  local i
  for i in $(seq 1 20); do
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
kafka_create_topic() {
  local topic="$1" out config
  shift
  local configs=()
  for config in "$@"; do configs+=(--config "$config"); done
  if ! out="$(kafka_java org.apache.kafka.tools.TopicCommand --bootstrap-server "$KAFKA_BOOTSTRAP" \
    --create --if-not-exists --topic "$topic" \
    --partitions 6 --replication-factor 1 "${configs[@]}" 2>&1)"; then
    printf '%s\n' "$out" >&2
    infra_die "could not create topic $topic"
  fi
  # Drop the tool's generic "period or underscore" metric-name warning.
  out="$(printf '%s\n' "$out" | grep -v "^WARNING: Due to limitations in metric names" || true)"
  if [ -n "$out" ]; then
    printf '%s\n' "$out" | sed 's/^/[kafka-topics] /' >&2
  fi
}
