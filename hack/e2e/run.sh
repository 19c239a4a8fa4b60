#!/usr/bin/env bash
# make e2e: builds what the e2e node needs, starts it (hack/e2e/node), runs the e2e tests
# (test/e2e, build tag e2e) and stops the node whatever happens, then checks that
# nothing of it is left running. docs/development.md, "The e2e node".
#   PODIUM_E2E_DIR   the node's directory (default .podium-e2e; wiped at start)
#   PODIUM_E2E_KEEP  1: leave the node running after the tests (make e2e-down stops it)
#   GOTEST_FLAGS     extra flags for go test (e.g. -ginkgo.focus=lease)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
dir="${PODIUM_E2E_DIR:-$root/.podium-e2e}"
mkdir -p "$dir" && dir="$(cd "$dir" && pwd)"
images="$root/dist/e2e"

if [ "$(id -u)" != 0 ]; then
  echo "make e2e runs containerd, kubelet and kube-proxy: it must run as root" >&2
  exit 1
fi

# Debian's containerd, runc, CNI plugins and iptables (nothing else provides them here).
need=()
command -v containerd >/dev/null || need+=(containerd)
command -v runc >/dev/null || need+=(runc)
[ -x /usr/lib/cni/bridge ] || need+=(containernetworking-plugins)
command -v iptables >/dev/null || need+=(iptables)
command -v conntrack >/dev/null || need+=(conntrack)
if [ ${#need[@]} -gt 0 ]; then
  echo ">> installing ${need[*]} (apt-get)" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# One node per machine: its bridge, address and port are fixed.
lock="${XDG_CACHE_HOME:-$HOME/.cache}/podium/e2e.lock"
mkdir -p "$(dirname "$lock")"
exec 8>"$lock"
if ! flock -n 8; then
  echo ">> another make e2e runs on this machine; waiting for it ($lock)" >&2
  flock 8
fi

t0=$(date +%s)
cp="$(bash hack/controlplane.sh)"
node="$(bash hack/controlplane.sh node)"

# The images: Podium's as make image assembles it (podium:dev, install.yaml's image), the
# pause image and the Job's program, each a static binary assembled by hack/image --tool.
make --no-print-directory image build-installer >&2
mkdir -p "$images/bin"
for tool in pause envsha; do
  CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags "-s -w" -o "$images/bin/$tool" "./hack/e2e/$tool"
done
go -C hack/image run . --tool "pause=$images/bin/pause" --out "$images/pause" \
  --archive "$images/pause.oci.tar" --ref registry.k8s.io/pause:podium-e2e >/dev/null
go -C hack/image run . --tool "envsha=$images/bin/envsha" --out "$images/envsha" \
  --archive "$images/envsha.oci.tar" --ref podium-e2e/envsha:e2e >/dev/null
go build -o bin/podium-e2e-node ./hack/e2e/node
echo ">> built in $(( $(date +%s) - t0 )) s" >&2

runner_pid=""
stop_node() {
  [ -n "$runner_pid" ] || return 0
  if [ "${PODIUM_E2E_KEEP:-}" = 1 ]; then
    echo ">> the node keeps running (pid $runner_pid): KUBECONFIG=$dir/kubeconfig; make e2e-down stops it" >&2
    return 0
  fi
  echo ">> stopping the node" >&2
  kill -TERM "$runner_pid" 2>/dev/null || true
  wait "$runner_pid" 2>/dev/null || true
  runner_pid=""
  # Nothing of the node may be left: no process naming its directory.
  local left
  if pgrep -a -f -- "$dir/" >&2; then
    echo "!! the processes above, of the node, are still running" >&2
    return 1
  fi
  # Nor anything it put in the kernel or outside its directory.
  local bad=""
  ip link show podium-e2e0 >/dev/null 2>&1 && bad+=" bridge podium-e2e0;"
  iptables-save 2>/dev/null | grep -q -- '-j KUBE-\|^:KUBE-' && bad+=" KUBE-* iptables chains;"
  grep -q " $dir/" /proc/self/mountinfo && bad+=" mounts under $dir;"
  find /var/log/containers -maxdepth 1 -lname "$dir/*" 2>/dev/null | grep -q . && bad+=" links in /var/log/containers;"
  if [ -n "$bad" ]; then
    echo "!! the node left:$bad" >&2
    return 1
  fi
  echo ">> the node is stopped; nothing of it is running" >&2
}
trap 'stop_node' EXIT
trap 'exit 130' INT TERM

# Start the node and wait for it (or for its failure).
bin/podium-e2e-node clean -dir "$dir" -node-assets "$node" 2>>"$dir/runner.log" || true
: > "$dir/runner.log"
bin/podium-e2e-node run -dir "$dir" -assets "$cp" -node-assets "$node" \
  -image "$images/pause.oci.tar" -image "$images/envsha.oci.tar" -image "$root/dist/podium-image.oci.tar" \
  2> >(tee -a "$dir/runner.log" >&2) &
runner_pid=$!
echo "$runner_pid" > "$dir/runner.pid"
t1=$(date +%s)
until [ -f "$dir/ready" ]; do
  if ! kill -0 "$runner_pid" 2>/dev/null; then
    runner_pid=""
    echo "!! the node did not start; see $dir/runner.log and $dir/logs/" >&2
    exit 1
  fi
  sleep 1
done
echo ">> node ready in $(( $(date +%s) - t1 )) s" >&2

t2=$(date +%s)
PODIUM_E2E_DIR="$dir" KUBECTL="$cp/kubectl" \
  go test -tags e2e ./test/e2e/ -count=1 -timeout 30m -v ${GOTEST_FLAGS:-} -ginkgo.v
echo ">> e2e tests passed in $(( $(date +%s) - t2 )) s" >&2
