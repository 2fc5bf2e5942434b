# shellcheck shell=bash
# The local 3-node Kafka cluster (KRaft, each node broker + controller, a 3-voter quorum) of
# tools/infra/kafka-cluster.sh, for replication and fault trials. Source lib.sh first, then this.
#
#   node n (1-3): broker 127.0.0.1:1909(n+1), controller 127.0.0.1:1919(n+1), data
#   $INVOICING_STATE_DIR/kafka-cluster/<n>, log $INFRA_LOG_DIR/kafka-cluster-<n>.log.
# Same jars as the single broker (kafka_ensure_libs); not started by up.sh.

KAFKA_CLUSTER_NODES="1 2 3"
KAFKA_CLUSTER_BOOTSTRAP="127.0.0.1:19092,127.0.0.1:19093,127.0.0.1:19094"
KAFKA_CLUSTER_VOTERS="1@127.0.0.1:19192,2@127.0.0.1:19193,3@127.0.0.1:19194"
KAFKA_CLUSTER_DIR="$INVOICING_STATE_DIR/kafka-cluster"
KAFKA_CLUSTER_HEAP_OPTS="${KAFKA_CLUSTER_HEAP_OPTS:--Xms128m -Xmx384m}"
# Few GC and JIT threads: three brokers share two cores with the services under test.
KAFKA_CLUSTER_JVM_OPTS="${KAFKA_CLUSTER_JVM_OPTS:--XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:ParallelGCThreads=1 -XX:ConcGCThreads=1 -XX:CICompilerCount=2}"
KAFKA_CLUSTER_START_TIMEOUT="${KAFKA_CLUSTER_START_TIMEOUT:-120}"
KAFKA_CLUSTER_STOP_TIMEOUT="${KAFKA_CLUSTER_STOP_TIMEOUT:-30}"
KAFKA_CLUSTER_ISR_TIMEOUT="${KAFKA_CLUSTER_ISR_TIMEOUT:-60}"

kafka_cluster_broker_port() { echo $((19091 + $1)); }
kafka_cluster_controller_port() { echo $((19191 + $1)); }
kafka_cluster_conf() { echo "$KAFKA_CLUSTER_DIR/server-$1.properties"; }
kafka_cluster_pid_file() { echo "$KAFKA_CLUSTER_DIR/broker-$1.pid"; }
kafka_cluster_log() { echo "$INFRA_LOG_DIR/kafka-cluster-$1.log"; }

# True while PID is a live process. A killed broker is a zombie until its parent (init, as it
# runs in its own session) reaps it, which may take a second or two: that counts as gone.
kafka_cluster_alive() {
  local state
  state="$(awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null || true)"
  [ -n "$state" ] && [ "$state" != "Z" ] && [ "$state" != "X" ]
}

kafka_cluster_valid_node() {
  case "${1:-}" in 1 | 2 | 3) return 0 ;; *) return 1 ;; esac
}

# Pid of *our* broker n (a java running kafka.Kafka with its rendered config), or nothing.
kafka_cluster_pid() { kafka_pid_of "$(kafka_cluster_conf "$1")" "$(kafka_cluster_pid_file "$1")"; }

# Broker n answers a Metadata request and knows all three brokers (registered and unfenced).
kafka_cluster_broker_ready() {
  local meta
  meta="$(kafka_metadata_at 127.0.0.1 "$(kafka_cluster_broker_port "$1")")" || return 1
  [ "$(grep -c '^broker ' <<<"$meta")" -eq 3 ]
}

# Broker n answers a Metadata request at all.
kafka_cluster_broker_answers() { kafka_metadata_ok_at 127.0.0.1 "$(kafka_cluster_broker_port "$1")"; }

kafka_cluster_render_configs() {
  local n tmp conf
  mkdir -p "$KAFKA_CLUSTER_DIR"
  for n in $KAFKA_CLUSTER_NODES; do
    conf="$(kafka_cluster_conf "$n")"
    tmp="$conf.tmp.$$"
    sed -e "s#@NODE_ID@#$n#g" \
      -e "s#@BROKER_PORT@#$(kafka_cluster_broker_port "$n")#g" \
      -e "s#@CONTROLLER_PORT@#$(kafka_cluster_controller_port "$n")#g" \
      -e "s#@VOTERS@#$KAFKA_CLUSTER_VOTERS#g" \
      -e "s#@DATA_DIR@#$KAFKA_CLUSTER_DIR/$n#g" \
      "$INFRA_DIR/kafka/cluster-server.properties" >"$tmp"
    if [ -f "$conf" ] && cmp -s "$tmp" "$conf"; then
      rm -f "$tmp"
    else
      mv "$tmp" "$conf"
    fi
  done
}

# A Kafka cluster id (what `kafka-storage random-uuid` prints: 16 random bytes, URL-safe base64
# without padding, not starting with "-"), without starting a JVM for it.
kafka_random_cluster_id() {
  local id
  while :; do
    id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
    case "$id" in -*) ;; *)
      echo "$id"
      return 0
      ;;
    esac
  done
}

# Format the log dirs never formatted, all with one cluster id (created once, kept in
# $KAFKA_CLUSTER_DIR/cluster-id) and the same static voter set (controller.quorum.voters in the
# configs, as for the single broker). Existing data is never reformatted.
kafka_cluster_format_if_needed() {
  local n id="" todo=() pids=() failed=0 i
  for n in $KAFKA_CLUSTER_NODES; do
    [ -f "$KAFKA_CLUSTER_DIR/$n/meta.properties" ] || todo+=("$n")
  done
  [ "${#todo[@]}" -gt 0 ] || return 0
  id="$(cat "$KAFKA_CLUSTER_DIR/cluster-id" 2>/dev/null || true)"
  if [ -z "$id" ]; then
    # Formatted nodes but no id file: take theirs.
    id="$(sed -n 's/^cluster\.id=//p' "$KAFKA_CLUSTER_DIR"/[123]/meta.properties 2>/dev/null | head -n 1 || true)"
  fi
  if [ -z "$id" ]; then
    id="$(kafka_random_cluster_id)"
  fi
  echo "$id" >"$KAFKA_CLUSTER_DIR/cluster-id"
  if [ "${#todo[@]}" -lt 3 ]; then
    infra_log "Kafka cluster: node(s) ${todo[*]} have no data while the others do; formatting them empty (they rejoin and copy the replicas; 'kafka-cluster.sh reset' starts over)"
  fi
  infra_log "formatting Kafka cluster log dir(s) of node(s) ${todo[*]} (cluster id $id)"
  # One JVM per node, in parallel.
  for n in "${todo[@]}"; do
    mkdir -p "$KAFKA_CLUSTER_DIR/$n"
    kafka_java kafka.tools.StorageTool format --ignore-formatted --cluster-id "$id" \
      --config "$(kafka_cluster_conf "$n")" >"$INFRA_LOG_DIR/kafka-cluster-format-$n.log" 2>&1 &
    pids+=("$!")
  done
  for i in "${!pids[@]}"; do
    if ! wait "${pids[$i]}"; then
      cat "$INFRA_LOG_DIR/kafka-cluster-format-${todo[$i]}.log" >&2
      failed=1
    fi
  done
  [ "$failed" -eq 0 ] || infra_die "kafka-storage format failed"
}

kafka_cluster_log_tail() {
  local log
  log="$(kafka_cluster_log "$1")"
  if [ -f "$log" ]; then
    echo "----- last 30 lines of $log -----" >&2
    tail -n 30 "$log" >&2
    echo "-----" >&2
  fi
}

# Start broker n in the background (own session, survives the calling shell). Does not wait.
kafka_cluster_spawn() {
  local n="$1" log conf pid
  log="$(kafka_cluster_log "$n")"
  conf="$(kafka_cluster_conf "$n")"
  if [ -f "$log" ] && [ "$(stat -c %s "$log")" -gt 52428800 ]; then
    mv -f "$log" "$log.1"
  fi
  infra_log "starting Kafka cluster node $n (broker 127.0.0.1:$(kafka_cluster_broker_port "$n"), log $log)"
  echo "===== $(date -u +%Y-%m-%dT%H:%M:%SZ) starting Kafka $KAFKA_VERSION cluster node $n =====" >>"$log"
  # shellcheck disable=SC2086
  (
    close_inherited_fds
    cd "$KAFKA_HOME" || exit 1
    exec setsid nohup java $KAFKA_CLUSTER_HEAP_OPTS $KAFKA_CLUSTER_JVM_OPTS \
      -Djava.awt.headless=true \
      -Dlog4j2.configurationFile="$KAFKA_LOG4J" \
      -cp "$KAFKA_LIBS/*" kafka.Kafka "$conf"
  ) </dev/null >>"$log" 2>&1 &
  pid=$!
  echo "$pid" >"$(kafka_cluster_pid_file "$n")"
}

# kafka_cluster_wait_ready N...: wait until each of these brokers answers and knows all three
# brokers; fails early if one of their processes exits.
kafka_cluster_wait_ready() {
  local deadline=$((SECONDS + KAFKA_CLUSTER_START_TIMEOUT)) n pending
  while :; do
    pending=""
    for n in "$@"; do
      kafka_cluster_broker_ready "$n" && continue
      pending="$pending $n"
      if ! kafka_cluster_pid "$n" >/dev/null; then
        kafka_cluster_log_tail "$n"
        infra_die "Kafka cluster node $n exited during startup (log: $(kafka_cluster_log "$n"))"
      fi
    done
    [ -n "$pending" ] || return 0
    if [ "$SECONDS" -ge "$deadline" ]; then
      for n in $pending; do kafka_cluster_log_tail "$n"; done
      infra_die "Kafka cluster node(s)$pending did not answer metadata requests with all three brokers registered within ${KAFKA_CLUSTER_START_TIMEOUT}s"
    fi
    sleep 0.5
  done
}

# Prints the first replication problem and returns 1, or prints nothing and returns 0, as every
# broker that answers sees it (Metadata of all topics, internal ones included):
#   kafka_cluster_isr_problem full     every partition has a leader and all its replicas in the ISR
#   kafka_cluster_isr_problem N        every partition has a leader, and broker N is in the ISR of
#                                      every partition it replicates; if all three brokers run,
#                                      every ISR is complete too
kafka_cluster_isr_problem() {
  local mode="$1" full=1 want="" n meta problem asked=0 running=0
  if [ "$mode" != "full" ]; then
    want="$mode"
    for n in $KAFKA_CLUSTER_NODES; do
      kafka_cluster_pid "$n" >/dev/null && running=$((running + 1))
    done
    [ "$running" -eq 3 ] || full=0
  fi
  for n in $KAFKA_CLUSTER_NODES; do
    meta="$(kafka_metadata_at 127.0.0.1 "$(kafka_cluster_broker_port "$n")")" || {
      if [ "$n" = "$want" ]; then
        echo "broker $n does not answer"
        return 1
      fi
      continue
    }
    asked=$((asked + 1))
    problem="$(awk -v want="$want" -v full="$full" -v by="$n" '
      $1 == "topic" && $3 != 0 { print "broker " by ": topic " $2 " error " $3; exit }
      $1 == "partition" {
        where = $2 "-" $3
        if ($5 < 0) { print "broker " by ": " where " has no leader"; exit }
        nr = split($6, r, ","); ni = ($7 == "-") ? 0 : split($7, s, ",")
        if (want != "") {
          inr = 0; ini = 0
          for (k = 1; k <= nr; k++) if (r[k] == want) inr = 1
          for (k = 1; k <= ni; k++) if (s[k] == want) ini = 1
          if (inr && !ini) { print "broker " by ": " where " Isr " $7 " lacks broker " want; exit }
        }
        if (full && ni != nr) { print "broker " by ": " where " Isr " $7 " of Replicas " $6; exit }
      }' <<<"$meta")"
    if [ -n "$problem" ]; then
      echo "$problem"
      return 1
    fi
  done
  if [ "$asked" -eq 0 ]; then
    echo "no broker answers"
    return 1
  fi
}

# kafka_cluster_wait_isr MODE [TIMEOUT_S]: poll kafka_cluster_isr_problem until it is satisfied.
kafka_cluster_wait_isr() {
  local mode="$1" timeout="${2:-$KAFKA_CLUSTER_ISR_TIMEOUT}" deadline problem
  deadline=$((SECONDS + timeout))
  while ! problem="$(kafka_cluster_isr_problem "$mode")"; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      infra_die "Kafka cluster: replicas not in sync within ${timeout}s: $problem"
    fi
    sleep 0.25
  done
}

# Refuse to start where a port of node n is taken by something that is not our broker n.
kafka_cluster_check_ports() {
  local n="$1" port
  for port in "$(kafka_cluster_broker_port "$n")" "$(kafka_cluster_controller_port "$n")"; do
    if tcp_open 127.0.0.1 "$port"; then
      infra_die "127.0.0.1:$port (Kafka cluster node $n) is taken by a process tools/infra did not start (no pid in $(kafka_cluster_pid_file "$n"))"
    fi
  done
}

# Create the topics of up.sh where absent, replicated: RF 3, min.insync.replicas=2.
kafka_cluster_create_topics() {
  local existing topic pids=() spec specs i failed=0
  existing="$(kafka_metadata_at 127.0.0.1 "$(kafka_cluster_broker_port 1)" | awk '$1 == "topic" { print $2 }')" || existing=""
  specs=(
    "$REVOCATIONS_TOPIC retention.ms=$REVOCATIONS_RETENTION_MS cleanup.policy=delete"
    "$DOMAIN_TOPIC cleanup.policy=compact"
    "$AUDIT_TOPIC retention.ms=$AUDIT_RETENTION_MS cleanup.policy=delete"
    "$WEBHOOK_ENDPOINTS_TOPIC retention.ms=$WEBHOOK_ENDPOINTS_RETENTION_MS cleanup.policy=delete"
    "$API_KEYS_TOPIC retention.ms=$API_KEYS_RETENTION_MS cleanup.policy=delete"
  )
  KAFKA_CLUSTER_TOPICS_CREATED=0
  for spec in "${specs[@]}"; do
    topic="${spec%% *}"
    grep -qxF "$topic" <<<"$existing" && continue
    # One topic tool (JVM) per topic, in parallel. $spec: topic and configs, no spaces inside.
    # shellcheck disable=SC2086
    kafka_create_topic_on "$KAFKA_CLUSTER_BOOTSTRAP" 3 $spec min.insync.replicas=2 &
    pids+=("$!")
    KAFKA_CLUSTER_TOPICS_CREATED=$((KAFKA_CLUSTER_TOPICS_CREATED + 1))
  done
  for i in "${pids[@]}"; do wait "$i" || failed=1; done
  [ "$failed" -eq 0 ] || infra_die "Kafka cluster: could not create the topics"
}

# Start every broker not running, wait until all three answer (with all three registered), create
# the topics if absent and wait until every ISR is complete. Sets KAFKA_CLUSTER_ACTION.
kafka_cluster_start() {
  local n todo=() fresh=false
  for n in $KAFKA_CLUSTER_NODES; do
    kafka_cluster_pid "$n" >/dev/null && continue
    kafka_cluster_check_ports "$n"
    todo+=("$n")
  done
  if [ "${#todo[@]}" -eq 0 ]; then
    KAFKA_CLUSTER_ACTION="already running"
  else
    command -v java >/dev/null 2>&1 || infra_die "java (17+) is required to run Kafka"
    kafka_ensure_libs
    ensure_state_dirs
    kafka_cluster_render_configs
    [ -f "$KAFKA_CLUSTER_DIR/cluster-id" ] || fresh=true
    kafka_cluster_format_if_needed
    for n in "${todo[@]}"; do kafka_cluster_spawn "$n"; done
    KAFKA_CLUSTER_ACTION="started node(s) ${todo[*]}"
    if $fresh; then KAFKA_CLUSTER_ACTION="$KAFKA_CLUSTER_ACTION (new cluster)"; fi
  fi
  # shellcheck disable=SC2086
  kafka_cluster_wait_ready $KAFKA_CLUSTER_NODES
  kafka_ensure_libs
  kafka_cluster_create_topics
  kafka_cluster_wait_isr full
}

# SIGTERM (controlled shutdown) to the given brokers at once, wait up to $KAFKA_CLUSTER_STOP_TIMEOUT,
# then SIGKILL. Brokers not running are skipped.
kafka_cluster_stop_nodes() {
  local n pid pids=() deadline alive
  for n in "$@"; do
    pid="$(kafka_cluster_pid "$n")" || continue
    infra_log "stopping Kafka cluster node $n (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    pids+=("$n:$pid")
  done
  [ "${#pids[@]}" -gt 0 ] || return 0
  deadline=$((SECONDS + KAFKA_CLUSTER_STOP_TIMEOUT))
  while :; do
    alive=""
    for n in "${pids[@]}"; do
      if kafka_cluster_alive "${n#*:}"; then alive="$alive $n"; fi
    done
    [ -n "$alive" ] || break
    if [ "$SECONDS" -ge "$deadline" ]; then
      for n in $alive; do
        infra_log "Kafka cluster node ${n%%:*} did not exit within ${KAFKA_CLUSTER_STOP_TIMEOUT}s; sending SIGKILL"
        kill -KILL "${n#*:}" 2>/dev/null || true
      done
      sleep 0.5
      break
    fi
    sleep 0.2
  done
  for n in "${pids[@]}"; do rm -f "$(kafka_cluster_pid_file "${n%%:*}")"; done
}

# Stop all three. Returns 1 if a port of the cluster is still held by something (not ours).
kafka_cluster_stop() {
  local n port foreign=0
  # shellcheck disable=SC2086
  kafka_cluster_stop_nodes $KAFKA_CLUSTER_NODES
  for n in $KAFKA_CLUSTER_NODES; do
    port="$(kafka_cluster_broker_port "$n")"
    if tcp_open 127.0.0.1 "$port"; then
      infra_log "something answers on 127.0.0.1:$port but was not started by tools/infra (no pid); leaving it alone"
      foreign=1
    fi
  done
  return "$foreign"
}

# kill -9 broker n (the fault trial): by its pid, so only a broker tools/infra started. No lock.
kafka_cluster_kill() {
  local n="$1" pid
  kafka_cluster_valid_node "$n" || infra_die "not a Kafka cluster node: '$n' (1, 2 or 3)"
  pid="$(kafka_cluster_pid "$n")" || infra_die "Kafka cluster node $n is not running"
  kill_and_wait "$pid" kafka_cluster_alive "Kafka cluster node $n (pid $pid)"
  rm -f "$(kafka_cluster_pid_file "$n")"
  infra_log "killed Kafka cluster node $n (pid $pid, SIGKILL)"
}

# Start broker n again with its data, wait until it answers (with all three brokers registered) and
# is back in the ISR of every partition it replicates (and every ISR is complete if all three run).
# Sets KAFKA_CLUSTER_ACTION.
kafka_cluster_start_broker() {
  local n="$1"
  kafka_cluster_valid_node "$n" || infra_die "not a Kafka cluster node: '$n' (1, 2 or 3)"
  if kafka_cluster_pid "$n" >/dev/null; then
    KAFKA_CLUSTER_ACTION="already running"
  else
    [ -f "$KAFKA_CLUSTER_DIR/$n/meta.properties" ] ||
      infra_die "Kafka cluster node $n has no data in $KAFKA_CLUSTER_DIR/$n: start the cluster with 'bash tools/infra/kafka-cluster.sh start'"
    # Alone it has no quorum (1 of 3 voters) and would never answer.
    local other others=0
    for other in $KAFKA_CLUSTER_NODES; do
      [ "$other" != "$n" ] && kafka_cluster_pid "$other" >/dev/null && others=$((others + 1))
    done
    [ "$others" -gt 0 ] ||
      infra_die "no other node of the Kafka cluster runs; start the whole cluster: bash tools/infra/kafka-cluster.sh start"
    kafka_cluster_check_ports "$n"
    kafka_ensure_libs
    kafka_cluster_render_configs
    kafka_cluster_spawn "$n"
    KAFKA_CLUSTER_ACTION="started"
  fi
  kafka_cluster_wait_ready "$n"
  kafka_cluster_wait_isr "$n"
}

kafka_cluster_status() {
  local n pid port running=0 answering=0 ready=0 lines="" state
  for n in $KAFKA_CLUSTER_NODES; do
    port="$(kafka_cluster_broker_port "$n")"
    pid="$(kafka_cluster_pid "$n" || true)"
    [ -z "$pid" ] || running=$((running + 1))
    if kafka_cluster_broker_ready "$n"; then
      answering=$((answering + 1)) ready=$((ready + 1))
      state="answers, 3 brokers registered"
    elif kafka_cluster_broker_answers "$n"; then
      answering=$((answering + 1))
      state="answers, not all 3 brokers registered"
    elif [ -n "$pid" ]; then
      state="process alive, not answering (starting or stopping?)"
    else
      state="stopped"
    fi
    lines="$lines  node $n 127.0.0.1:$port${pid:+ (pid $pid)}: $state"$'\n'
  done
  if [ "$ready" -eq 3 ]; then
    echo "kafka-cluster: running, bootstrap $KAFKA_CLUSTER_BOOTSTRAP (Kafka $KAFKA_VERSION, data $KAFKA_CLUSTER_DIR)"
    printf '%s' "$lines"
    return 0
  fi
  if [ "$running" -gt 0 ] || [ "$answering" -gt 0 ]; then
    echo "kafka-cluster: not all three up ($running of 3 processes of ours, $answering answering)"
    printf '%s' "$lines"
    return 2
  fi
  echo "kafka-cluster: stopped"
  printf '%s' "$lines"
  return 3
}
