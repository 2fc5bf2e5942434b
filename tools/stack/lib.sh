# Shared by start.sh and stop.sh (sourced; expects ROOT, STACK_DIR and LOG_DIR).

stack_main() { echo "dist/apps/$1/apps/$1/src/main.js"; }

# True when the pid in <name>.pid is alive and is still the node process we started.
stack_running() {
  local pidfile="$STACK_DIR/$1.pid" pid
  [ -f "$pidfile" ] || return 1
  pid="$(cat "$pidfile")"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "$(stack_main "$1")"
}

# SIGTERM (the services drain in-flight requests), up to 20 s, then SIGKILL. Returns 1 when nothing ran.
stack_stop() {
  local name="$1" pidfile="$STACK_DIR/$1.pid" pid i
  if ! stack_running "$name"; then
    rm -f "$pidfile"
    return 1
  fi
  pid="$(cat "$pidfile")"
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 200); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "stack: $name (pid $pid) did not stop within 20 s; killing it" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
  echo "stack: stopped $name (pid $pid)"
}

stack_port_free() {
  ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# stack_start NAME MAIN [VAR=value...]. Own session (setsid): the service outlives this shell and a
# Ctrl-C in it.
stack_start() {
  local name="$1" main="$2"
  shift 2
  echo "===== $(date -u +%Y-%m-%dT%H:%M:%SZ) starting $name =====" >>"$LOG_DIR/$name.log"
  env "$@" setsid node "$main" serve >>"$LOG_DIR/$name.log" 2>&1 </dev/null &
  echo $! >"$STACK_DIR/$name.pid"
}

stack_wait_ready() {
  local name="$1" port="$2" timeout="$3" started
  started=$(date +%s)
  until curl -fsS -o /dev/null "http://127.0.0.1:$port/health/ready" 2>/dev/null; do
    if ! stack_running "$name"; then
      tail -n 30 "$LOG_DIR/$name.log" >&2
      echo "stack: error: $name exited before it was ready (log: $LOG_DIR/$name.log)" >&2
      exit 1
    fi
    if [ $(( $(date +%s) - started )) -ge "$timeout" ]; then
      tail -n 30 "$LOG_DIR/$name.log" >&2
      echo "stack: error: $name not ready after $timeout s (log: $LOG_DIR/$name.log)" >&2
      exit 1
    fi
    sleep 0.3
  done
  echo "stack: $name ready on http://127.0.0.1:$port ($(( $(date +%s) - started )) s)"
}
