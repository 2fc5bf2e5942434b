# Shared by start.sh, stop.sh and status.sh (sourced; expects ROOT, STACK_DIR and LOG_DIR).

stack_main() { echo "dist/apps/$1/apps/$1/src/main.js"; }

# The process name of instance I of service NAME, which names its pid and log files: NAME for the
# first (the names a single-instance stack always had), NAME-I for the others (auth-service-2).
stack_process_name() { if [ "$2" = 1 ]; then echo "$1"; else echo "$1-$2"; fi; }

# The service a process name runs: auth-service-2 → auth-service, auth-service → auth-service.
stack_service_of() { if [[ "$1" =~ ^(.+)-[0-9]+$ ]]; then echo "${BASH_REMATCH[1]}"; else echo "$1"; fi; }

# The gateway's folder: its rendered nginx.conf, pid file and buffered bodies.
stack_gateway_dir() { echo "$STACK_DIR/gateway"; }

# What the process of <name> has in its command line: the app's main.js, or the gateway's nginx.conf.
stack_signature() {
  if [ "$1" = gateway ]; then echo "$(stack_gateway_dir)/nginx.conf"; else stack_main "$(stack_service_of "$1")"; fi
}

# True when the pid in <name>.pid (a process name: auth-service, auth-service-2, gateway) is alive
# and is still the process we started.
stack_running() {
  local pidfile="$STACK_DIR/$1.pid" pid
  [ -f "$pidfile" ] || return 1
  pid="$(cat "$pidfile")"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$(stack_signature "$1")"
}

# SIGTERM (the services drain in-flight requests; nginx is sent SIGQUIT, its graceful stop), up to
# 20 s, then SIGKILL. Returns 1 when nothing ran.
stack_stop() {
  local name="$1" pidfile="$STACK_DIR/$1.pid" pid i signal=TERM
  if ! stack_running "$name"; then
    rm -f "$pidfile"
    return 1
  fi
  pid="$(cat "$pidfile")"
  [ "$name" = gateway ] && signal=QUIT
  kill "-$signal" "$pid" 2>/dev/null || true
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

# Stops every instance of service NAME that a previous start left running (NAME, NAME-2, ...), however
# many instances it ran.
stack_stop_service() {
  local pidfile
  for pidfile in "$STACK_DIR/$1.pid" "$STACK_DIR/$1"-[0-9]*.pid; do
    [ -f "$pidfile" ] || continue
    stack_stop "$(basename "$pidfile" .pid)" || true
  done
}

stack_port_free() {
  ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# stack_start NAME MAIN [VAR=value...], NAME a process name (auth-service-2). Own session (setsid):
# the service outlives this shell and a Ctrl-C in it.
stack_start() {
  local name="$1" main="$2"
  shift 2
  echo "===== $(date -u +%Y-%m-%dT%H:%M:%SZ) starting $name =====" >>"$LOG_DIR/$name.log"
  env "$@" setsid node "$main" serve >>"$LOG_DIR/$name.log" 2>&1 </dev/null &
  echo $! >"$STACK_DIR/$name.pid"
}

# stack_start_gateway PORT OFFSET [INSTANCES]: renders the gateway's nginx.conf for the services on
# this machine (their ports + OFFSET, every one of INSTANCES instances in each upstream, connecting
# from 127.0.0.2), checks it, and runs nginx in the foreground of its own session; its access log
# (JSON lines) and error log go to logs/gateway.log. Every request is marked sampled: with a
# collector configured, a developer sees each of theirs.
stack_start_gateway() {
  local port="$1" offset="$2" instances="${3:-1}" dir
  dir="$(stack_gateway_dir)"
  mkdir -p "$dir"
  chmod 755 "$dir"
  npx --no-install tsx --tsconfig libs/gateway/tsconfig.spec.json libs/gateway/src/cli.ts render \
    --offset "$offset" --instances "$instances" --listen "127.0.0.1:$port" --runtime-dir "$dir" --proxy-bind 127.0.0.2 --trace-sample-percent 100 \
    --access-log "$LOG_DIR/gateway.log" --error-log stderr --out "$dir/nginx.conf"
  nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
  "$nginx_bin" -p "$dir" -e stderr -c "$dir/nginx.conf" -t -q || { echo "stack: error: nginx refused $dir/nginx.conf" >&2; exit 1; }
  echo "===== $(date -u +%Y-%m-%dT%H:%M:%SZ) starting gateway =====" >>"$LOG_DIR/gateway.log"
  setsid "$nginx_bin" -p "$dir" -e stderr -c "$dir/nginx.conf" -g 'daemon off;' >>"$LOG_DIR/gateway.log" 2>&1 </dev/null &
  echo $! >"$STACK_DIR/gateway.pid"
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
