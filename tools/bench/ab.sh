#!/usr/bin/env bash
# Before/after on one machine at one time: the same app built from two checkouts runs side by side
# against the same Postgres, Redis and Kafka, and both take the same load in alternating rounds
# (A B, B A, ...). It prints, per round, the requests per second and the CPU the process itself
# spent per request (utime + stime from /proc), then the means without the first round (JIT warm-up).
# CPU per request is the figure to compare: on a shared two-core machine throughput moves with
# whatever else runs, CPU per request much less. Prints figures, asserts nothing.
#
#   bash tools/bench/ab.sh BEFORE_DIR AFTER_DIR [token|refresh|gateway|read|list|401|create|revocation|invoice-read|invoice-create] [rounds, default 6]
#
# invoice-read, invoice-create: the same on the invoice service (an invoice of two lines, read by id
# as JSON; created with its own Idempotency-Key), its client created through the stack first.
#
# revocation: the two copies of the product service consume the same revocation feed; each of
# rounds x 10 trials revokes a session (a refresh token reused) and measures on both copies at once how
# long until each refuses the session's access token (tools/bench/revocation-ab.mjs): delivery
# latency, not throughput.
#
# create: 16 connections creating products, each create with its own body and Idempotency-Key
# (tools/bench/create-load.mjs): CPU per create of the product service.
#
# refresh: 16 chains of refresh-token rotations (each answer's token is the next request's), driven
# by tools/bench/refresh-load.mjs: autocannon can only repeat one request.
#
# AB_AFTER_ALLOWED_IPS=N: the after side's load uses a second key of the same organization whose
# IP allowlist has N entries (N-1 blocks that do not match, then 127.0.0.1), so its tokens carry the
# list. With the same checkout on both sides, that is the cost of an allowlist (token, read, list).
#
# Both checkouts must be built (npx nx run-many -t build) and the stack of one of them running
# (bash tools/stack/start.sh): its auth service makes the key and the token, its product service the
# product that `read` gets. The two copies listen on 3901 (before) and 3902 (after).
set -euo pipefail
BEFORE=$(cd "${1:?before checkout}" && pwd)
AFTER=$(cd "${2:?after checkout}" && pwd)
WHAT="${3:-token}"
ROUNDS="${4:-6}"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
AC="$ROOT/node_modules/.bin/autocannon"
AUTH=http://127.0.0.1:3001
PRODUCTS=http://127.0.0.1:3005
LOGS="$ROOT/tmp/bench-ab"
mkdir -p "$LOGS"
say() { printf 'ab: %s\n' "$*" >&2; }
json() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=JSON.parse(s);console.log(process.argv[1].split(".").reduce((o,k)=>o[k],v))})' "$1"; }

curl -sf "$AUTH/health/ready" >/dev/null || { say "no auth service on $AUTH: start a stack first (bash tools/stack/start.sh)"; exit 1; }

# A key made by the CLI of the running stack's checkout, and a token for it.
SCOPES="read:products write:products read:invoices write:invoices read:clients write:clients"
key=$(cd "$AFTER" && node dist/apps/auth-service/apps/auth-service/src/main.js create-key \
  --organization-name "bench ab $(date +%s)" --name ab --scopes "$SCOPES")
client_id=$(json client_id <<<"$key")
client_secret=$(json client_secret <<<"$key")
basic="Basic $(printf '%s:%s' "$client_id" "$client_secret" | base64 -w0)"
token=$(curl -sf -H "authorization: $basic" -d grant_type=client_credentials "$AUTH/api/v1/auth/token" | json access_token)
basic_after=$basic; token_after=$token
if [ -n "${AB_AFTER_ALLOWED_IPS:-}" ]; then
  ips=$(node -e 'const n=+process.argv[1]; console.log([...Array.from({length:n-1},(_,i)=>`10.${i>>8}.${i&255}.0/24`),"127.0.0.1"].join(","))' "$AB_AFTER_ALLOWED_IPS")
  key2=$(cd "$AFTER" && node dist/apps/auth-service/apps/auth-service/src/main.js create-key \
    --organization-id "$(json organization_id <<<"$key")" --name ab-allowlist --scopes "$SCOPES" --allowed-ips "$ips")
  basic_after="Basic $(printf '%s:%s' "$(json client_id <<<"$key2")" "$(json client_secret <<<"$key2")" | base64 -w0)"
  token_after=$(curl -sf -H "authorization: $basic_after" -d grant_type=client_credentials "$AUTH/api/v1/auth/token" | json access_token)
  say "after side: a key with $AB_AFTER_ALLOWED_IPS allowed_ips (its token is $(printf %s "$token_after" | wc -c) bytes, without: $(printf %s "$token" | wc -c))"
fi

case "$WHAT" in
  refresh)
    app=auth-service; count=6000; path=/api/v1/auth/refresh; load=() ; load_after=() ;;
  token | gateway)
    # gateway: the same exchange through two gateway copies in front of the stack's auth service;
    # the CPU is the gateway's own (a POST: the proxied-body path).
    app=auth-service; [ "$WHAT" = gateway ] && app=gateway
    count=15000; path=/api/v1/auth/token
    load=(-m POST -H "authorization=$basic" -H "content-type=application/x-www-form-urlencoded" -b grant_type=client_credentials)
    load_after=(-m POST -H "authorization=$basic_after" -H "content-type=application/x-www-form-urlencoded" -b grant_type=client_credentials) ;;
  revocation)
    app=product-service; count=0 ;;
  create)
    app=product-service; count=4000; path=/api/v1/products ;;
  read | list | 401)
    app=product-service; count=40000
    product=$(curl -sf -X POST -H "authorization: Bearer $token" -H 'content-type: application/json' \
      -d '{"name":"ab","unit_price":100,"currency":"EUR"}' "$PRODUCTS/api/v1/products" | json id)
    case "$WHAT" in
      read) path="/api/v1/products/$product"; load=(-H "authorization=Bearer $token"); load_after=(-H "authorization=Bearer $token_after") ;;
      list) path="/api/v1/products?limit=20"; count=15000; load=(-H "authorization=Bearer $token"); load_after=(-H "authorization=Bearer $token_after") ;;
      401) path="/api/v1/products/$product"; load=(-H "authorization=Bearer not-a-token"); load_after=("${load[@]}") ;;
    esac ;;
  invoice-read | invoice-create)
    app=invoice-service
    client=$(curl -sf -X POST -H "authorization: Bearer $token" -H 'content-type: application/json' \
      -d '{"name":"ab","address":{"line1":"1 Main St","city":"Paris","country":"FR"}}' http://127.0.0.1:3003/api/v1/clients | json id)
    if [ "$WHAT" = invoice-create ]; then
      count=2000; path=/api/v1/invoices; export AB_CLIENT_ID=$client
    else
      count=40000
      invoice=$(curl -sf -X POST -H "authorization: Bearer $token" -H 'content-type: application/json' \
        -d "{\"client_id\":\"$client\",\"currency\":\"EUR\",\"line_items\":[{\"description\":\"a\",\"quantity\":1,\"unit_price\":100},{\"description\":\"b\",\"quantity\":2,\"unit_price\":250,\"tax_rate_bps\":1900}]}" \
        http://127.0.0.1:3002/api/v1/invoices | json id)
      path="/api/v1/invoices/$invoice"; load=(-H "authorization=Bearer $token"); load_after=(-H "authorization=Bearer $token_after")
    fi ;;
  *) say "unknown load $WHAT: token, gateway, read, list, 401, create, revocation, invoice-read or invoice-create"; exit 2 ;;
esac

pid_on() { ss -ltnp | grep ":$1 " | grep -o 'pid=[0-9]*' | head -n1 | cut -d= -f2; }
start() { # DIR PORT
  (cd "$1" && PORT=$2 RATE_LIMIT_PER_SECOND=1000000 setsid node "dist/apps/$app/apps/$app/src/main.js" serve >"$LOGS/$app-$2.log" 2>&1 </dev/null &)
}
stop() { for port in 3901 3902; do pid=$(pid_on $port || true); [ -n "$pid" ] && kill "$pid" 2>/dev/null || true; done; }
trap stop EXIT
start "$BEFORE" 3901
start "$AFTER" 3902
for port in 3901 3902; do
  for _ in $(seq 1 240); do curl -sf "http://127.0.0.1:$port/health/ready" >/dev/null && break; sleep 0.5; done
  curl -sf "http://127.0.0.1:$port/health/ready" >/dev/null || { say "$app on $port did not get ready (log: $LOGS/$app-$port.log)"; exit 1; }
done

if [ "$WHAT" = revocation ]; then
  say "$app, revocation delivery: $((ROUNDS * 10)) trials; before = $BEFORE, after = $AFTER"
  node "$ROOT/tools/bench/revocation-ab.mjs" "$AUTH" http://127.0.0.1:3901 http://127.0.0.1:3902 "$basic" $((ROUNDS * 10))
  exit 0
fi

tck=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
say "$app, $WHAT: $count requests a round, 16 connections, $ROUNDS rounds; before = $BEFORE, after = $AFTER"
results=()
for round in $(seq 1 "$ROUNDS"); do
  order="3901 3902"; [ $((round % 2)) -eq 0 ] && order="3902 3901"
  for port in $order; do
    pid=$(pid_on $port); c0=$(cpu_ticks "$pid")
    if [ "$WHAT" = refresh ]; then
      side_basic=$basic; [ "$port" = 3902 ] && side_basic=$basic_after
      out=$(node "$ROOT/tools/bench/refresh-load.mjs" "http://127.0.0.1:$port" "$count" "$side_basic")
    elif [ "$WHAT" = create ] || [ "$WHAT" = invoice-create ]; then
      side_token=$token; [ "$port" = 3902 ] && side_token=$token_after
      out=$(node "$ROOT/tools/bench/create-load.mjs" "http://127.0.0.1:$port" "$count" "$side_token" "${AB_CLIENT_ID:-}")
    else
      if [ "$port" = 3902 ]; then args=("${load_after[@]}"); else args=("${load[@]}"); fi
      out=$("$AC" -c 16 -a "$count" -j "${args[@]}" "http://127.0.0.1:$port$path" 2>/dev/null)
    fi
    c1=$(cpu_ticks "$pid")
    rps=$(json requests.average <<<"$out")
    us=$(awk -v a="$c0" -v b="$c1" -v t="$tck" -v n="$count" 'BEGIN{printf "%.1f", (b-a)/t/n*1e6}')
    side=before; [ "$port" = 3902 ] && side=after
    printf 'round %d  %-6s %8.0f req/s  %7s µs CPU/request\n' "$round" "$side" "$rps" "$us"
    results+=("$round $side $rps $us")
  done
done
printf '%s\n' "${results[@]}" | awk '$1 > 1 { n[$2]++; r[$2] += $3; c[$2] += $4 }
  END {
    printf "mean of rounds 2-%d: before %.0f req/s, %.1f µs CPU/request; after %.0f req/s, %.1f µs CPU/request\n", n["before"] + 1, r["before"]/n["before"], c["before"]/n["before"], r["after"]/n["after"], c["after"]/n["after"]
    printf "after / before: throughput %.2fx, CPU per request %.2fx\n", (r["after"]/n["after"])/(r["before"]/n["before"]), (c["after"]/n["after"])/(c["before"]/n["before"])
  }'
