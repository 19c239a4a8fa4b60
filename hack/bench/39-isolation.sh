#!/usr/bin/env bash
# Failure isolation (issue 39): what a Job asking for a hosted secret costs over an
# unannotated one, quiet and under a flood of anonymous public reads, for the two layouts
# in one run (BenchmarkIsolation, internal/delivery/bench_isolation_test.go):
#  - one-process: podium-operator --public-read (controllers, the delivery webhook, the
#    public read) in one cgroup held to one CPU, as the one-Deployment install ran;
#  - split: the operator (no public read) in its cgroup and podium-operator --role=read in
#    its own, each held to the CPU limit its Deployment sets (config/manager/manager.yaml,
#    config/read/read.yaml; a Deployment that sets none is held to one CPU, the quota that
#    stands in for a Pod's limit in the issue's first measurement).
# Against one envtest control plane (kube-apiserver, etcd; not under a quota), an org
# member creates N unannotated Jobs and N Jobs annotated hub.podium.dev/secrets (the
# requester holds that hosted secret), the kinds taking turns; then the same while
# hack/loadgen's load posts page 1 of a ROWS-row board to the public read address (the one
# process's, or the read tier's) over FLOOD_CONNS connections. Everything binds
# 127.0.0.1; every process it starts stops with it; the cgroups are removed at the end.
# Needs root and the cpu controller (cgroup v2 at /sys/fs/cgroup, else cgroup v1's cpu
# hierarchy at /sys/fs/cgroup/cpu). Env: KUBEBUILDER_ASSETS, N (default 200), ROWS
# (default 2000), FLOOD_CONNS (default 32), ORDER (split-first: the split layout first),
# PIN (set: the flood, and the read tier of the split layout, run on the last CPU and
# everything else (control plane, operator, the Jobs' client) on the others, standing for
# the internet's clients and a read replica on another node; on a 2-core machine this
# leaves the operator one CPU, where its one-CPU quota never throttles it, so it hides
# that part of the coupling too: see docs/performance.md. Unset, every process shares
# the machine's CPUs, which on 2 cores the flood and its server nearly fill).
set -euo pipefail
cd "$(dirname "$0")/../.."
export KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS:-$(bash hack/controlplane.sh)}
N=${N:-200}
ROWS=${ROWS:-2000}
FLOOD_CONNS=${FLOOD_CONNS:-32}

# Skipped (not failed: make bench runs every script) where it cannot hold the processes to a quota.
[ "$(id -u)" = 0 ] || { echo "39-isolation.sh: skipped, it needs root (it makes cgroups)"; exit 0; }

# cpu_limit FILE: the container's CPU limit in the Deployment FILE, in millicores ("" if none).
cpu_limit() {
  local v
  v=$(sed -nE 's/.*limits: *\{[^}]*cpu: *"?([0-9.]+m?)"?.*/\1/p' "$1" | head -1)
  case "$v" in
    "") echo "" ;;
    *m) echo "${v%m}" ;;
    *) python3 -c "print(int(float('$v') * 1000))" ;;
  esac
}
op_milli=$(cpu_limit config/manager/manager.yaml)
read_milli=$(cpu_limit config/read/read.yaml)
op_note="config/manager/manager.yaml"
if [ -z "$op_milli" ]; then op_milli=1000; op_note="config/manager/manager.yaml sets no CPU limit: one CPU"; fi
if [ -z "$read_milli" ]; then read_milli=1000; fi

# The cgroups: v2 (cpu.max) if /sys/fs/cgroup is cgroup2 with the cpu controller
# enabled for its children, else v1's cpu hierarchy (cpu.cfs_quota_us).
period=100000
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
  if ! grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control; then
    echo "39-isolation.sh: skipped, the cpu controller is not enabled in /sys/fs/cgroup/cgroup.subtree_control"; exit 0
  fi
  cg_root=/sys/fs/cgroup; cg_kind=v2
elif [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
  cg_root=/sys/fs/cgroup/cpu; cg_kind=v1
else
  echo "39-isolation.sh: skipped, no cgroup cpu controller (neither cgroup v2 at /sys/fs/cgroup nor v1 at /sys/fs/cgroup/cpu)"; exit 0
fi
cg_op="$cg_root/podium-bench-operator-$$"
cg_read="$cg_root/podium-bench-read-$$"

work=$(mktemp -d)
bench_pid=""
cleanup() {
  # The benchmark stops its processes (and its control plane) on SIGTERM; anything left
  # in the cgroups is ours: end it.
  if [ -n "$bench_pid" ] && kill -0 "$bench_pid" 2>/dev/null; then
    kill -TERM "$bench_pid" 2>/dev/null || true
    for _ in $(seq 150); do kill -0 "$bench_pid" 2>/dev/null || break; sleep 0.2; done
  fi
  for cg in "$cg_op" "$cg_read"; do
    [ -d "$cg" ] || continue
    for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do kill "$p" 2>/dev/null || true; done
  done
  for cg in "$cg_op" "$cg_read"; do
    [ -d "$cg" ] || continue
    for _ in $(seq 50); do [ -s "$cg/cgroup.procs" ] || break; sleep 0.2; done
    rmdir "$cg" 2>/dev/null || echo "!! could not remove $cg" >&2
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

make_cgroup() { # DIR MILLICORES
  mkdir "$1"
  local quota=$(( $2 * period / 1000 ))
  if [ "$cg_kind" = v2 ]; then
    echo "$quota $period" >"$1/cpu.max"
  else
    echo "$period" >"$1/cpu.cfs_period_us"
    echo "$quota" >"$1/cpu.cfs_quota_us"
  fi
}
make_cgroup "$cg_op" "$op_milli"
make_cgroup "$cg_read" "$read_milli"

go build -o "$work/podium-operator" ./cmd/operator
(cd hack/loadgen && go build -o "$work/podium-loadgen" .)
go test -c -o "$work/delivery.test" ./internal/delivery
pin=(); read_cpus=""; pin_note="no CPU pinning"
if [ -n "${PIN:-}" ]; then
  last=$(( $(nproc) - 1 ))
  [ "$last" -ge 1 ] || { echo "39-isolation.sh: PIN needs two CPUs" >&2; exit 1; }
  pin=(taskset -c "0-$(( last - 1 ))"); read_cpus=$last
  pin_note="pinned: flood and read tier on CPU $last, the rest on CPU 0-$(( last - 1 ))"
fi

echo "== failure isolation: $N Jobs of each kind per phase, flood $FLOOD_CONNS connections on a $ROWS-row board; cgroup $cg_kind"
echo "== operator: $op_milli millicores ($op_note); read tier: $read_milli millicores (config/read/read.yaml); $(nproc) CPUs, $pin_note"
echo "== $(uptime | sed 's/.*load/load/')"
PODIUM_ISOLATION_BIN="$work" PODIUM_ISOLATION_LOGS="$work" PODIUM_BENCH_N="$N" PODIUM_ISOLATION_ROWS="$ROWS" \
  PODIUM_FLOOD_CONNS="$FLOOD_CONNS" PODIUM_CGROUP_OPERATOR="$cg_op" PODIUM_CGROUP_READ="$cg_read" \
  PODIUM_ISOLATION_ORDER="${ORDER:-}" PODIUM_READ_CPUS="$read_cpus" \
  "${pin[@]}" "$work/delivery.test" -test.run '^$' -test.bench '^BenchmarkIsolation$' -test.benchtime 1x -test.count 1 -test.timeout 60m \
  >"$work/bench.out" 2>&1 &
bench_pid=$!
status=0
wait "$bench_pid" || status=$?
bench_pid=""
awk '
  /^flood / { print "   " $0; next }
  /^BenchmarkIsolation\// {
    split("", m)
    for (i = 3; i < NF; i++) m[$(i+1)] = $i
    name = $1; sub(/^BenchmarkIsolation\//, "", name); sub(/-[0-9]+$/, "", name)
    if (name ~ /delivery-cost$/)
      printf "%-40s delivering Job cost p50: quiet %+6.2f ms, flooded %+6.2f ms, flooded/quiet %.2fx\n", name, m["quiet-ms"], m["flooded-ms"], m["ratio"]
    else
      printf "%-40s p50 %7.2f  p99 %7.2f ms  refused %d\n", name, m["p50-ms"], m["p99-ms"], m["refused"]
    next }
  /^(FAIL|---|panic|ok|PASS)/ || /_test.go:/ { print }' "$work/bench.out"
echo "== $(uptime | sed 's/.*load/load/')"
if [ "$status" != 0 ]; then
  echo "!! the benchmark failed; its output and the processes' logs:" >&2
  cat "$work/bench.out" >&2
  tail -n 30 "$work"/*.log >&2 2>/dev/null || true
fi
exit "$status"
