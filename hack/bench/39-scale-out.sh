#!/usr/bin/env bash
# Scale-out speed (issue 39): a new read replica (podium-operator --role=read) started
# against an apiserver holding ROWS rows, against a raw LIST of the same rows in the same
# run. Measured: the raw LIST (kubectl get -o json; a Go client decoding typed rows in
# pages of 500 from etcd, and in one request from the watch cache), the replica's time
# from start to Ready (/readyz 200, which waits for every board to be ranked) and to
# serving every row ranked, and its live heap per row (gctrace after a forced GC, minus a
# replica started without rows). Goals: Ready within 2x the raw LIST, at most 1,536 B of
# live heap a row. Figures in docs/performance.md, "Scale-out".
#
# The rows are seeded as hack/bench/30-read.sh seeds them (straight into etcd, one put a
# row; hack/loadgen/etcd.go says why). Env: KUBEBUILDER_ASSETS (control plane),
# PODIUM_BIN (built binaries), ROWS (default 100000), PROFILE (set: write the replica's
# CPU profile of its start-up, up to every row served, to this file), TRACE (set: trace
# the script), KEEP (set: keep the scratch directory with the logs).
set -euo pipefail
[ -n "${TRACE:-}" ] && set -x
cd "$(dirname "$0")/../.."

ROWS=${ROWS:-100000}
export KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS:-$(bash hack/controlplane.sh)}
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

. hack/bench/lib/controlplane.sh

# The bench build: a forced GC on SIGUSR1 (cmd/operator/benchgc.go) and the start-up CPU
# profile (cmd/operator/benchprof.go).
go build -tags benchgc -o "$work/podium-operator-benchgc" ./cmd/operator
kubectl="$KUBEBUILDER_ASSETS/kubectl"

now() { date +%s.%N; }

start_controlplane

# start_read NAME [env...]: a read replica as the chart runs it (--role=read), with
# gctrace (the live heap marked by each GC cycle) on stderr.
start_read() {
  local name=$1; shift
  http_port=$(port)
  env GODEBUG=gctrace=1 "$@" "$work/podium-operator-benchgc" --role=read --kubeconfig "$work/kc" \
    --http-addr "127.0.0.1:$http_port" --metrics-bind-address 0 --health-probe-bind-address 0 \
    --operator-url "" >"$work/$name.log" 2>&1 &
  read_pid=$!
  pids+=($read_pid)
  base="http://127.0.0.1:$http_port"
}
# await_ready: polls /readyz every 50 ms until 200 (at most 5 minutes).
await_ready() {
  for _ in $(seq 6000); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$base/readyz")" = 200 ] && return 0
    sleep 0.05
  done
  echo "the read replica never became Ready" >&2; tail -20 "$work/$1.log" >&2; return 1
}
# live_heap LOG: the live heap (MB) marked by the last GC cycle (a forced one: SIGUSR1
# collects and turns the collector off, SIGUSR2 back on).
live_heap() {
  local n
  n=$(grep -c '(forced)' "$1" || true)
  kill -USR1 "$read_pid"
  for _ in $(seq 100); do [ "$(grep -c '(forced)' "$1" || true)" -gt "$n" ] && break; sleep 0.1; done
  kill -USR2 "$read_pid"
  grep '(forced)' "$1" | tail -1 | grep -oE '[0-9]+->[0-9]+->[0-9]+ MB' | sed -E 's/^[0-9]+->[0-9]+->([0-9]+) MB$/\1/'
}
board='"package":"bench/ds","name":"main"'

echo ">> read replica without rows (baseline memory)"
start_read r0
await_ready r0
sleep 2
base_heap=$(live_heap "$work/r0.log")
kill "$read_pid"; wait "$read_pid" 2>/dev/null || true

echo ">> seeding $ROWS rows"
"$lg" seed -kubeconfig "$work/kc" -etcd "$(cat "$work/etcd")" -rows "$ROWS"
# The apiserver's watch cache follows etcd: wait until it serves every row.
for _ in $(seq 120); do
  n=$("$lg" list -kubeconfig "$work/kc" -limit 0 | python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"])')
  [ "$n" = "$ROWS" ] && break; sleep 1
done
[ "$n" = "$ROWS" ] || { echo "the watch cache serves $n rows, not $ROWS" >&2; exit 1; }

echo ">> raw LIST of $ROWS rows"
t=$(now); "$kubectl" --kubeconfig "$work/kc" get leaderboardrows -A -o json >/dev/null; kubectl_s=$(python3 -c "print($(now)-$t)")
go_pages=$("$lg" list -kubeconfig "$work/kc" -limit 500)
go_cache=$("$lg" list -kubeconfig "$work/kc" -limit 0)
for r in "$go_pages" "$go_cache"; do
  [ "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["rows"])' "$r")" = "$ROWS" ] || { echo "a raw LIST got $r" >&2; exit 1; }
done
pages_s=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["seconds"])' "$go_pages")
cache_s=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["seconds"])' "$go_cache")

echo ">> a new read replica against $ROWS rows"
prof=()
[ -n "${PROFILE:-}" ] && prof=(PODIUM_BENCH_CPUPROFILE="$PROFILE")
t0=$(now)
start_read r1 "${prof[@]}"
await_ready r1
t1=$(now)
"$lg" await -url "$base/v1/leaderboard-read" -body "{$board,\"page_size\":1}" -total "$ROWS" -timeout 1m
t2=$(now)
# Ready means served: the first read after Ready must already serve every row ranked.
total=$(curl -sf -X POST -H 'Content-Type: application/json' -d "{$board,\"page_size\":1}" "$base/v1/leaderboard-read" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["pagination"]["total"])')
[ "$total" = "$ROWS" ] || { echo "Ready, but the board serves $total rows, not $ROWS" >&2; exit 1; }
if [ -n "${PROFILE:-}" ]; then
  kill -HUP "$read_pid"; wait_for "$work/r1.log" "CPU profile written" 30
fi
heap=$(live_heap "$work/r1.log")
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$ROWS" "$kubectl_s" "$pages_s" "$cache_s" "$t0" "$t1" "$t2" "$base_heap" "$heap" "$total" "$(nproc)" "$load_start" "$load_end" <<'PY'
import sys
a = sys.argv[1:]
rows = int(a[0])
kubectl_s, pages_s, cache_s, t0, t1, t2, bh, h = map(float, a[1:9])
total, cpus, load0, load1 = a[9], a[10], a[11], a[12]
ready, served = t1 - t0, t2 - t0
floor = min(pages_s, cache_s)
per = (h - bh) * 1024 * 1024 / rows
print()
print(f"scale-out bench: {rows} rows, {cpus} CPUs, load average {load0} at the start, {load1} at the end")
print(f"  raw LIST: kubectl get -o json {kubectl_s:.1f} s; Go, typed, pages of 500 {pages_s:.1f} s; Go, typed, one request from the watch cache {cache_s:.1f} s")
print(f"  new read replica: Ready (/readyz 200) after {ready:.1f} s, serving {total} rows ranked after {served:.1f} s")
print(f"  Ready / fastest raw LIST = {ready/floor:.2f}x (goal <= 2x: {'met' if ready <= 2*floor else 'NOT met'})")
print(f"  live heap {bh:.0f} MB -> {h:.0f} MB = {per:,.0f} B/row (goal <= 1,536: {'met' if per <= 1536 else 'NOT met'})")
PY
