#!/usr/bin/env bash
# The public leaderboard read at 100,000 rows (issue 4): requests/s and p50/p99 latency
# of page 1 and page 2,000 (page_size 50) over loopback with wrk at 32 connections
# (better of two 8 s runs each), POST and GET; the
# operator's memory per row; the same read done the naive way (list the rows from the
# apiserver and sort them per request); and the ceiling, a trivial Go server answering
# the same bytes from memory with the same headers, and nginx serving them as a static
# file (a second ceiling, for the GET read). Figures are written up in docs/performance.md.
#
# The rows are written straight into etcd (hack/loadgen/etcd.go says why); the
# apiserver, its watch cache, the operator's informers, rank index and HTTP server are
# the real ones. Env: KUBEBUILDER_ASSETS (control plane), PODIUM_BIN (built binaries),
# ROWS (default 100000), DURATION (wrk seconds per run, default 8), STARTUP_ONLY (set:
# stop after the operator's start-up pass over the rows, reporting its writes).
set -euo pipefail
cd "$(dirname "$0")/../.."

ROWS=${ROWS:-100000}
DURATION=${DURATION:-8}
CONNS=32
export KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS:-$(bash hack/controlplane.sh)}

if [ -z "${STARTUP_ONLY:-}" ] && ! command -v wrk >/dev/null; then
  echo ">> installing wrk from Debian"
  if [ "$(id -u)" = 0 ]; then apt-get install -y wrk >/dev/null; else sudo apt-get install -y wrk >/dev/null; fi
fi

. hack/bench/lib/controlplane.sh

bin=${PODIUM_BIN:-$work}
if [ ! -x "$bin/podium-operator" ]; then bin=$work; go build -o "$bin/podium-operator" ./cmd/operator; fi
# The same operator with a signal switch for its collector (cmd/operator/benchgc.go):
# the page 1 read is measured once more with the collector off, in the same process.
go build -tags benchgc -o "$work/podium-operator-benchgc" ./cmd/operator

start_controlplane

# start_operator NAME [BINARY]: runs podium-operator with gctrace (the live heap after
# each GC), without the admission probe (this control plane has no admission policies).
# Plain HTTP metrics: rows_queued reads them (over HTTPS without a token it got
# nothing, read that as "nothing queued", and measured during the start-up pass).
start_operator() {
  http_port=$(port); metrics_port=$(port)
  GODEBUG=gctrace=1 "${2:-$bin/podium-operator}" --kubeconfig "$work/kc" --http-addr "127.0.0.1:$http_port" \
    --metrics-bind-address "127.0.0.1:$metrics_port" --metrics-secure=false --health-probe-bind-address 0 --admission-probe-namespace "" \
    --public-read >"$work/$1.log" 2>&1 &
  op_pid=$!
  pids+=($op_pid)
  read_url="http://127.0.0.1:$http_port/v1/leaderboard-read"
}
# live_heap LOG [SKIP]: the smallest live heap (MB marked by a GC cycle, from gctrace)
# among the cycles after the first SKIP; without SKIP, that of the last cycle. A cycle
# during load also marks the garbage of requests in flight, so the smallest is closest.
live_heap() {
  local mb
  # gctrace shares stderr with the request log, so a line of one can land inside a
  # line of the other: match each cycle's "A->B->C MB" wherever it stands.
  mb=$({ grep -oE '[0-9]+->[0-9]+->[0-9]+ MB' "$1" || true; } | sed -E 's/^[0-9]+->[0-9]+->([0-9]+) MB$/\1/' |
    if [ -n "${2:-}" ]; then tail -n +"$(( $2 + 1 ))" | sort -n | head -1; else tail -1; fi)
  echo "${mb:-0}" # no cycle yet: the heap is still under the GC's first goal (4 MB)
}
gc_cycles() { grep -oE '[0-9]+->[0-9]+->[0-9]+ MB' "$1" | wc -l; }
# rows_queued: LeaderboardRow reconciles still queued (the controllers' start-up pass).
rows_queued() {
  local m
  m=$(curl -sf "http://127.0.0.1:$metrics_port/metrics") || { echo unknown; return; }
  awk '/^workqueue_depth\{.*name="leaderboardrow"/ {s += $NF} END {print s+0}' <<<"$m"
}
rss_kb() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }

board='"package":"bench/ds","name":"main"'

echo ">> operator without rows (baseline memory)"
start_operator op0
"$lg" await -url "$read_url" -body "{$board,\"page_size\":1}" -total 0 -timeout 2m
sleep 3
base_heap=$(live_heap "$work/op0.log"); base_rss=$(rss_kb "$op_pid")
kill "$op_pid"; wait "$op_pid" 2>/dev/null || true

echo ">> seeding $ROWS rows"
"$lg" seed -kubeconfig "$work/kc" -etcd "$(cat "$work/etcd")" -rows "$ROWS"

echo ">> operator with $ROWS rows"
t0=$(date +%s.%N)
start_operator op1 "$work/podium-operator-benchgc"
"$lg" await -url "$read_url" -body "{$board,\"page_size\":1}" -total "$ROWS" -timeout 4m
t1=$(date +%s.%N)
# The controllers visit every row once at start-up (finding nothing to write); measure
# after that pass, not during it.
for _ in $(seq 600); do [ "$(rows_queued)" = 0 ] && break; sleep 1; done
t2=$(date +%s.%N)
[ "$(rows_queued)" = 0 ] || echo "!! the controllers' start-up pass has not drained; the reads below overlap it" >&2
# What the start-up pass wrote: PATCH and PUT requests of the operator's client
# (controller-runtime's rest_client_requests_total). The seeded rows have no recorded id
# (hub.podium.dev/id), as rows stored before ids were recorded: an upgrade or a restart
# over a large board must not cost a write per row (docs/performance.md, "Rows in").
# The ledgers are written a moment after the pass (rows gathered, then up to 5,000 a
# write): wait until they hold every row that lacks a recorded identity.
ledgered() {
  "$KUBEBUILDER_ASSETS/kubectl" --kubeconfig "$work/kc" get rowidentityledgers -A -o json |
    python3 -c 'import json,sys; print(sum(len(i.get("rows") or {}) for i in json.load(sys.stdin)["items"]))'
}
for _ in $(seq 300); do [ "$(ledgered)" -ge "$ROWS" ] && break; sleep 1; done
t3=$(date +%s.%N)
echo ">> rows held by row identity ledgers: $(ledgered) of $ROWS, $(python3 -c "print(f'{$t3-$t0:.1f}')") s after the operator started"
startup_writes=$(curl -sf "http://127.0.0.1:$metrics_port/metrics" |
  awk '/^rest_client_requests_total\{.*method="(PATCH|PUT)"/ {s += $NF} END {print s+0}')
startup_posts=$(curl -sf "http://127.0.0.1:$metrics_port/metrics" |
  awk '/^rest_client_requests_total\{.*method="POST"/ {s += $NF} END {print s+0}')
# Rows without a recorded identity are recorded in RowIdentityLedger objects, many rows a
# write (docs/operations.md, "Backup and restore"): count them, and the rows the pass
# wrote an identity on.
ledgers=$("$KUBEBUILDER_ASSETS/kubectl" --kubeconfig "$work/kc" get rowidentityledgers -A --no-headers 2>/dev/null | wc -l)
annotated=$("$KUBEBUILDER_ASSETS/kubectl" --kubeconfig "$work/kc" get leaderboardrows -A -o jsonpath='{range .items[*]}{.metadata.annotations.hub\.podium\.dev/id}{"\n"}{end}' | grep -c . || true)
echo ">> start-up pass: $(python3 -c "print(f'{$t2-$t0:.1f}')") s, $startup_writes writes (PATCH, PUT) and $startup_posts creates (POST: ledgers, events, reviews) by the operator for $ROWS rows; $ledgers row identity ledgers; $annotated rows with an id written on them"
if [ -n "${STARTUP_ONLY:-}" ]; then exit 0; fi # the start-up pass alone, no reads

cat >"$work/post.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = os.getenv("BODY")
LUA
: >"$work/get.lua"
# run_wrk NAME URL BODY [GET]: prints "rps p50_ms p99_ms" of the better of two runs: the
# machine is shared, and a run that overlaps someone else's burst says nothing of ours.
run_wrk() {
  local script="$work/post.lua"; [ "${4:-}" = GET ] && script="$work/get.lua"
  BODY=$3 wrk -t2 -c$CONNS -d2s -s "$script" "$2" >/dev/null 2>&1 || true # warm-up
  for try in 1 2; do
    BODY=$3 wrk -t2 -c$CONNS -d"${DURATION}s" --latency -s "$script" "$2" >"$work/$1.$try.wrk" 2>&1
    if grep -q "Non-2xx" "$work/$1.$try.wrk"; then echo "wrk $1: non-2xx answers" >&2; cat "$work/$1.$try.wrk" >&2; return 1; fi
    awk '
      function ms(v) { if (v ~ /us$/) return v/1000; if (v ~ /ms$/) return v+0; if (v ~ /s$/) return v*1000; return v }
      /^ +50%/ {p50=ms($2)} /^ +99%/ {p99=ms($2)} /^Requests\/sec/ {rps=$2}
      END {printf "%.0f %.2f %.2f\n", rps, p50, p99}' "$work/$1.$try.wrk"
  done | sort -n -r | head -1
}

page1="{$board,\"page\":1,\"page_size\":50}"
pageN="{$board,\"page\":2000,\"page_size\":50}"
curl -sf -X POST -H 'Content-Type: application/json' -d "$page1" "$read_url" >"$work/page1.json"
bytes=$(wc -c <"$work/page1.json")

echo ">> ceiling: the same $bytes bytes from memory"
ceil_port=$(port)
"$lg" ceiling -addr "127.0.0.1:$ceil_port" -body "$work/page1.json" >"$work/ceiling.log" 2>&1 &
pids+=($!)
wait_for "$work/ceiling.log" "serving on" 10
read -r c_rps c_p50 c_p99 < <(run_wrk ceiling "http://127.0.0.1:$ceil_port/" "$page1")

echo ">> nginx: the same $bytes bytes as a static file (GET), a second ceiling"
if ! command -v nginx >/dev/null; then
  echo ">> installing nginx from Debian"
  if [ "$(id -u)" = 0 ]; then apt-get install -y nginx-light >/dev/null 2>&1 || apt-get install -y nginx >/dev/null; else sudo apt-get install -y nginx >/dev/null; fi
fi
ngx_port=$(port)
mkdir -p "$work/nginx"
# nginx's workers run as an unprivileged user: let them reach the page (and only it).
chmod 711 "$work"; chmod 644 "$work/page1.json"
cat >"$work/nginx/nginx.conf" <<NGX
worker_processes 2;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $work/nginx/body; proxy_temp_path $work/nginx/proxy;
  fastcgi_temp_path $work/nginx/fastcgi; uwsgi_temp_path $work/nginx/uwsgi; scgi_temp_path $work/nginx/scgi;
  server {
    listen 127.0.0.1:$ngx_port;
    location = /page1 {
      default_type application/json;
      add_header Cache-Control "public, max-age=300, stale-while-revalidate=3600";
      add_header Access-Control-Allow-Origin "*";
      add_header Access-Control-Expose-Headers "ETag";
      add_header Vary "Authorization";
      alias $work/page1.json;
    }
  }
}
NGX
nginx -c "$work/nginx/nginx.conf" -g 'daemon off;' 2>"$work/nginx/stderr" &
pids+=($!)
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$ngx_port/page1" >/dev/null 2>&1 && break; sleep 0.1; done
cmp -s "$work/page1.json" <(curl -sf "http://127.0.0.1:$ngx_port/page1") || { echo "nginx does not serve the page" >&2; exit 1; }
read -r x_rps x_p50 x_p99 < <(run_wrk nginx "http://127.0.0.1:$ngx_port/page1" "" GET)

echo ">> operator: page 1 and page 2,000 (POST), page 1 (GET)"
cycles_before=$(gc_cycles "$work/op1.log")
read -r p1_rps p1_p50 p1_p99 < <(run_wrk page1 "$read_url" "$page1")
# The same read with the collector off for the run (collected once before; no cycle
# during it): what the GC's cycles cost the tail, with the same process and heap.
kill -USR1 "$op_pid"; sleep 1
read -r o_rps o_p50 o_p99 < <(run_wrk page1-gcoff "$read_url" "$page1")
kill -USR2 "$op_pid"; sleep 1
read -r pn_rps pn_p50 pn_p99 < <(run_wrk page2000 "$read_url" "$pageN")
get_url="http://127.0.0.1:$http_port/v1/leaderboards/bench/ds/main?page=1&page_size=50"
cmp -s "$work/page1.json" <(curl -sf "$get_url") || { echo "GET and POST answer different bytes" >&2; exit 1; }
read -r g_rps g_p50 g_p99 < <(run_wrk get1 "$get_url" "" GET)
# Measured over the load runs: their garbage makes the GC run often, with every row
# loaded and the controllers' start-up pass done.
heap=$(live_heap "$work/op1.log" "$cycles_before"); rss=$(rss_kb "$op_pid")

echo ">> naive: list $ROWS rows from the apiserver and sort, per request (2 requests)"
naive_port=$(port)
"$lg" naive -kubeconfig "$work/kc" -addr "127.0.0.1:$naive_port" >"$work/naive.log" 2>&1 &
pids+=($!)
wait_for "$work/naive.log" "serving on" 10
"$lg" load -url "http://127.0.0.1:$naive_port/" -body "$page1" -c 1 -n 2 -save "$work/naive-page1.json" >"$work/naive.json"
n_rps=$(python3 -c 'import json,sys; print("%.4f" % json.load(open(sys.argv[1]))["rps"])' "$work/naive.json")
n_p50=$(python3 -c 'import json,sys; print("%.0f" % json.load(open(sys.argv[1]))["p50_ms"])' "$work/naive.json")
same=no; cmp -s "$work/page1.json" "$work/naive-page1.json" && same=yes

python3 - "$ROWS" "$bytes" "$base_heap" "$heap" "$base_rss" "$rss" "$t0" "$t1" "$t2" \
  "$c_rps" "$c_p50" "$c_p99" "$p1_rps" "$p1_p50" "$p1_p99" "$pn_rps" "$pn_p50" "$pn_p99" "$n_rps" "$n_p50" "$same" "$(nproc)" "$(cut -d' ' -f1 /proc/loadavg)" \
  "$x_rps" "$x_p50" "$x_p99" "$g_rps" "$g_p50" "$g_p99" "$o_rps" "$o_p50" "$o_p99" <<'PY'
import sys
a = sys.argv[1:]
o_rps, o50, o99 = map(float, a[29:32])
x_rps, x50, x99, g_rps, g50, g99 = map(float, a[23:29])
rows, size = int(a[0]), int(a[1])
bh, h, brss, rss = float(a[2]), float(a[3]), float(a[4]), float(a[5])
t0, t1 = float(a[6]), float(a[7])
t2 = float(a[8])
c_rps, c50, c99, p1, p150, p199, pn, pn50, pn99, n_rps, n50 = map(float, a[9:20])
same, cpus, load = a[20], a[21], a[22]
print()
print(f"read bench: {rows} rows, page_size 50 ({size} bytes a page), wrk 32 connections, {cpus} CPUs, load average {load}")
print(f"  ceiling (same bytes from memory)  {c_rps:9.0f} req/s  p50 {c50:6.2f} ms  p99 {c99:7.2f} ms  (Go, POST, body read, Content-Length, the read's headers)")
print(f"  nginx (same bytes, static file)   {x_rps:9.0f} req/s  p50 {x50:6.2f} ms  p99 {x99:7.2f} ms  (GET)")
print(f"  operator page 1                   {p1:9.0f} req/s  p50 {p150:6.2f} ms  p99 {p199:7.2f} ms  = {100*p1/c_rps:.0f}% of the ceiling (target >= 60%)")
print(f"  operator page 1, collector off     {o_rps:9.0f} req/s  p50 {o50:6.2f} ms  p99 {o99:7.2f} ms  (same process, GOGC=off for the run: the GC's share of the tail)")
print(f"  operator page 1, GET              {g_rps:9.0f} req/s  p50 {g50:6.2f} ms  p99 {g99:7.2f} ms  = {100*g_rps/p1:.0f}% of the POST read, {100*g_rps/x_rps:.0f}% of nginx")
print(f"  operator page 2,000               {pn:9.0f} req/s  p50 {pn50:6.2f} ms  p99 {pn99:7.2f} ms  = {100*pn/p1:.0f}% of page 1")
print(f"  naive (list + sort per request)   {n_rps:9.4f} req/s  p50 {n50:6.0f} ms  -> operator page 1 is {p1/n_rps:,.0f}x the naive read (target >= 50x); same bytes: {same}")
print(f"  p99 target < 10 ms: page 1 {'met' if p199 < 10 else 'NOT met'}, page 2,000 {'met' if pn99 < 10 else 'NOT met'}")
print(f"  operator start-up to all {rows} rows served: {t1-t0:.1f} s; controllers' start-up pass over the rows done after {t2-t0:.1f} s")
per_heap = (h - bh) * 1024 * 1024 / rows
per_rss = (rss - brss) * 1024 / rows
print(f"  operator memory: live heap {bh:.0f} MB -> {h:.0f} MB = {per_heap:,.0f} B/row (target < 2048 B/row); RSS {brss/1024:.0f} MB -> {rss/1024:.0f} MB = {per_rss:,.0f} B/row (GOGC=100 lets the heap grow to twice the live heap)")
PY
