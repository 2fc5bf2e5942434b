#!/usr/bin/env bash
# Starts the whole platform locally with no configuration: dependencies, infrastructure (Postgres,
# Redis, Kafka), a build of every app, every service's migrations, every built service and the
# gateway (Debian's nginx with the configuration libs/gateway renders from the platform table) in
# the background, then waits until each one is ready and prints the base URL.
#
# Idempotent: run it again after a change and it rebuilds and restarts what it started before.
# Services of the platform table (libs/contracts/src/platform.ts) that are not built yet are
# skipped with a note. Logs: .infra/stack/logs/<name>.log, pids: .infra/stack/<name>.pid (instance
# i > 1: <name>-<i>.log, <name>-<i>.pid). Stop with tools/stack/stop.sh, list with tools/stack/status.sh.
#
#   bash tools/stack/start.sh [--instances N]
#
# Optional: --instances N (or STACK_INSTANCES=N; 1 to 4, default 1) runs N instances of the auth
# service, of every resource service and of the webhook service (settings-web stays one), instance i on
# its port + 10 x (i - 1) (3001, 3011, 3021, 3031 for the auth service; libs/gateway/src/instances.ts),
# each migrated once, and the gateway spreads requests over all of them (a refused connection moves
# on to the next).
# STACK_PORT_OFFSET=N moves every port by N (the gateway to 8080+N), for a machine where another copy
# of the platform already holds the default ports.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
STACK_DIR="${INVOICING_STATE_DIR:-$ROOT/.infra}/stack"
LOG_DIR="$STACK_DIR/logs"
READY_TIMEOUT="${STACK_READY_TIMEOUT:-120}"
OFFSET="${STACK_PORT_OFFSET:-0}"
[[ "$OFFSET" =~ ^[0-9]+$ ]] || { echo "stack: STACK_PORT_OFFSET must be a number" >&2; exit 2; }
INSTANCES="${STACK_INSTANCES:-1}"
usage() { echo "usage: tools/stack/start.sh [--instances N]   (N: 1 to 4; or STACK_INSTANCES=N)" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --instances) [ $# -ge 2 ] || usage; INSTANCES="$2"; shift 2 ;;
    --instances=*) INSTANCES="${1#*=}"; shift ;;
    *) usage ;;
  esac
done
# 1 to MAX_INSTANCES of libs/gateway/src/instances.ts (services.ts checks it again), before the build.
[[ "$INSTANCES" =~ ^[1-4]$ ]] || usage
export NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false

say() { printf 'stack: %s\n' "$*"; }
die() { printf 'stack: error: %s\n' "$*" >&2; exit 1; }

bash tools/setup.sh
bash tools/infra/up.sh

say "building every app (npx nx run-many -t build)"
mkdir -p "$ROOT/tmp"
npx nx run-many -t build --outputStyle=static >"$ROOT/tmp/stack-build.log" 2>&1 || {
  tail -n 40 "$ROOT/tmp/stack-build.log" >&2
  die "build failed (full log: tmp/stack-build.log)"
}

mkdir -p "$LOG_DIR"
# shellcheck source=tools/stack/lib.sh
source tools/stack/lib.sh

# One row per process: `name instance port kind` (instances of the same service in a row, gateway last).
mapfile -t TABLE < <(npx --no-install tsx tools/stack/services.ts --instances "$INSTANCES")
[ "${#TABLE[@]}" -gt 1 ] || die "could not read the service table from libs/contracts/src/platform.ts"

declare -A PORT_OF=()
NAMES=()
for row in "${TABLE[@]}"; do
  read -r name instance port kind <<<"$row"
  [ "$kind" = gateway ] && continue
  PORT_OF["$name:$instance"]=$((port + OFFSET))
  [ "$instance" = 1 ] && NAMES+=("$name")
done

# The environment of instance INSTANCE of a service, one VAR=value a line. Every service's URL from the
# same table (AUTH_SERVICE_URL=http://127.0.0.1:3001 ...): services that check references against
# another service call it with them, and the auth service forwards Settings → Webhooks to
# WEBHOOK_SERVICE_URL (ADR 0038); the rest ignore them. Instance i calls instance i of the others
# (settings-web, one instance, at its only port), so the instances of a peer share the calls.
service_env() {
  local instance="$1" name var
  for name in "${NAMES[@]}"; do
    var="$(tr 'a-z-' 'A-Z_' <<<"$name")_URL"
    echo "$var=http://127.0.0.1:${PORT_OF["$name:$instance"]:-${PORT_OF["$name:1"]}}"
  done
  # The gateway connects to the services from 127.0.0.2 (nginx's proxy_bind), and the services believe
  # X-Forwarded-For from that address only: a caller of a service's own port on 127.0.0.1 cannot claim
  # another address (ADR 0022). A local process that binds 127.0.0.2 itself still can: this is a dev stack.
  echo "TRUSTED_PROXIES=127.0.0.2"
  # The webhook service may deliver to a receiver on this machine (loopback, plain http); the others
  # ignore the variable. Never so in production, which refuses it.
  echo "WEBHOOK_ALLOW_PRIVATE_URLS=true"
  # No variable names the instance to OpenTelemetry: the services' tracing resource carries
  # service.name only (libs/service-kit/src/tracing/sdk.ts reads no OTEL_RESOURCE_ATTRIBUTES); each
  # instance logs to a file of its own.
}

# What this start ran, one `process port` a line, for tools/stack/status.sh.
PROCESSES="$STACK_DIR/processes"
: >"$PROCESSES"

# Services first (the gateway answers 503 for an upstream that is not up yet), gateway last.
started=()
gateway_port=""
for row in "${TABLE[@]}"; do
  read -r name instance port kind <<<"$row"
  port=$((port + OFFSET))
  if [ "$kind" = gateway ]; then gateway_port=$port; continue; fi
  process="$(stack_process_name "$name" "$instance")"
  main="$(stack_main "$name")"
  if [ ! -f "$main" ]; then
    [ "$instance" != 1 ] || say "skipping $name: $main does not exist (apps/$name is not in this checkout yet)"
    continue
  fi
  if [ "$instance" = 1 ]; then
    # Every instance a previous start left, however many it ran; then the migrations, once per service.
    stack_stop_service "$name"
    # The services with migrations, as the Nx plugin infers their `migrate` target (tools/nx-plugin).
    if [ -d "apps/$name/src/database/migrations" ]; then
      say "migrating $name"
      node "$main" migrate >>"$LOG_DIR/$name.log" 2>&1 || { tail -n 20 "$LOG_DIR/$name.log" >&2; die "$name migrate failed"; }
    fi
  fi
  stack_port_free "$port" || die "port $port (for $process) is taken by a process this script did not start; stop it first"
  say "starting $process on port $port"
  mapfile -t env < <(service_env "$instance")
  stack_start "$process" "$main" "PORT=$port" "${env[@]}"
  started+=("$process:$port")
  echo "$process $port" >>"$PROCESSES"
done

[ -n "$gateway_port" ] || die "no gateway port in the platform table"
stack_stop gateway || true
stack_port_free "$gateway_port" || die "port $gateway_port (for the gateway) is taken by a process this script did not start; stop it first"
say "starting the gateway (nginx) on port $gateway_port, $INSTANCES instance(s) per service behind it"
stack_start_gateway "$gateway_port" "$OFFSET" "$INSTANCES"
started+=("gateway:$gateway_port")
echo "gateway $gateway_port" >>"$PROCESSES"
base_url="http://localhost:$gateway_port"

for entry in "${started[@]}"; do
  stack_wait_ready "${entry%%:*}" "${entry##*:}" "$READY_TIMEOUT"
done

auth_main="$(stack_main auth-service)"
cat <<MSG

  The platform is up. Base URL: $base_url

  Create a first API key (its Secret Key is shown once):
    node $auth_main create-key --organization-name Acme --name ERP --scopes read:invoices,write:invoices

  Exchange it for an access token:
    curl -s $base_url/api/v1/auth/token -H 'content-type: application/json' \\
      -d '{"grant_type":"client_credentials","client_id":"<API_KEY>","client_secret":"<SECRET_KEY>"}'

  Then: curl -s $base_url/api/v1/invoices -H 'authorization: Bearer <ACCESS_TOKEN>'
MSG
if [ -f "$(stack_main settings-web)" ]; then
  echo "  Settings page (sign up, create keys): $base_url/settings"
fi
cat <<MSG

  Logs: ${LOG_DIR#"$ROOT"/}/   Processes: bash tools/stack/status.sh
  Stop: bash tools/stack/stop.sh   (add --all to stop Postgres/Redis/Kafka too)
MSG
