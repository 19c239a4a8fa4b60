# Sourced by the benches that seed rows straight into etcd (30-read.sh, 39-scale-out.sh):
# a scratch directory removed on exit (kept with KEEP set), the processes started into
# pids stopped on exit, the load generator built into $lg, and the helpers port,
# wait_for and start_controlplane (a local control plane; its kubeconfig in $work/kc,
# etcd's URL in $work/etcd).
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

(cd hack/loadgen && go build -o "$work/podium-loadgen" .)
lg="$work/podium-loadgen"

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

wait_for() { # file pattern seconds
  for _ in $(seq "$3"); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 1; done
  echo "timed out waiting for $2 in $1" >&2; cat "$1" >&2; return 1
}

start_controlplane() {
  echo ">> control plane"
  "$lg" controlplane -kubeconfig "$work/kc" -etcd-url-file "$work/etcd" >"$work/cp.log" 2>&1 &
  pids+=($!)
  wait_for "$work/cp.log" "control plane ready" 90
  "$lg" seed -kubeconfig "$work/kc" -rows 0
}
