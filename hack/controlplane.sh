#!/usr/bin/env bash
# Builds the pinned local control plane (kube-apiserver, kube-controller-manager, etcd,
# kubectl) from Go modules into bin/k8s/<version>/, only what is missing. A copy is kept in
# the user cache directory, keyed by version, so a fresh clone on the same machine reuses
# it instead of rebuilding; a binary added to the list later is built alone into the same
# cache directory, next to the ones already there. Prints the directory holding the
# binaries (usable as KUBEBUILDER_ASSETS).
#
#   hack/controlplane.sh        the control plane, bin/k8s/<k8s>-etcd<etcd>/
#   hack/controlplane.sh node   the node components of the e2e cluster (kubelet,
#                               kube-scheduler, kube-proxy from the same k8s.io/kubernetes,
#                               crictl from sigs.k8s.io/cri-tools), bin/k8s-node/<k8s>-crictl<v>/
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-1.36.3}"   # k8s.io/kubernetes; staging modules at v0.36.3
ETCD_VERSION="${ETCD_VERSION:-3.6.8}"  # the etcd that k8s.io/kubernetes v1.36.3 requires
CRICTL_VERSION="${CRICTL_VERSION:-1.36.0}"  # sigs.k8s.io/cri-tools, the release of k8s 1.36

root="$(cd "$(dirname "$0")/.." && pwd)"
case "${1:-}" in
  "")
    KEY="${K8S_VERSION}-etcd${ETCD_VERSION}" kind=k8s
    bins=(kube-apiserver etcd kubectl kube-controller-manager) ;;
  node)
    KEY="${K8S_VERSION}-crictl${CRICTL_VERSION}" kind=k8s-node
    bins=(kubelet kube-scheduler kube-proxy crictl) ;;
  *) echo "usage: $0 [node]" >&2; exit 2 ;;
esac
dest="$root/bin/$kind/$KEY"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/podium/$kind/$KEY"

have_all() { local d=$1 b; for b in "${bins[@]}"; do [ -x "$d/$b" ] || return 1; done; }

if have_all "$dest"; then echo "$dest"; exit 0; fi

mkdir -p "$(dirname "$cache")"
exec 9>"$(dirname "$cache")/.build.lock"
flock 9   # one build at a time per machine (both lists share the lock file's directory)

# k8s builds what is missing of the binaries of k8s.io/kubernetes in the list (all but etcd
# and crictl), at one version, into the cache directory.
k8s() {
  local missing=() b
  for b in "${bins[@]}"; do
    case "$b" in etcd|crictl) ;; *) [ -x "$cache/$b" ] || missing+=("$b") ;; esac
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  local work minor staging kmod ver
  work="$(dirname "$cache")/build-$KEY"
  rm -rf "$work" && mkdir -p "$work/apiserver" "$cache"
  minor="${K8S_VERSION#*.}"; minor="${minor%%.*}"
  staging="0.${K8S_VERSION#*.}"

  echo ">> building ${missing[*]} v$K8S_VERSION from Go modules (a cold build takes a while)" >&2
  kmod="$(cd "$work/apiserver" && go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  {
    echo "module podium.dev/hack/apiserver"
    echo
    echo "go 1.26.0"
    echo
    echo "require k8s.io/kubernetes v$K8S_VERSION"
    echo
    # Every staging module is replaced by its published version.
    sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#replace \1 => \1 v'"$staging"'#p' "$kmod"
  } > "$work/apiserver/go.mod"
  ver="-X k8s.io/component-base/version.gitVersion=v$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
  ver="$ver -X k8s.io/client-go/pkg/version.gitVersion=v$K8S_VERSION -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor"
  for b in "${missing[@]}"; do
    (cd "$work/apiserver" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $ver" \
        -o "$cache/$b.tmp" "k8s.io/kubernetes/cmd/$b")
    mv "$cache/$b.tmp" "$cache/$b"
  done
  rm -rf "$work"
}

etcd() {
  [[ " ${bins[*]} " == *" etcd "* ]] || return 0
  [ -x "$cache/etcd" ] && return 0
  local work
  work="$(dirname "$cache")/build-$KEY-etcd"
  rm -rf "$work" && mkdir -p "$work" "$cache"
  echo ">> building etcd v$ETCD_VERSION from Go modules" >&2
  cat > "$work/main.go" <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  printf 'module podium.dev/hack/etcd\n\ngo 1.26.0\n\nrequire go.etcd.io/etcd/server/v3 v%s\n' "$ETCD_VERSION" > "$work/go.mod"
  (cd "$work" && go mod tidy >&2 && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$cache/etcd.tmp" .)
  mv "$cache/etcd.tmp" "$cache/etcd"
  rm -rf "$work"
}

# crictl (the CRI client, to look into containerd when an e2e run fails) from cri-tools'
# own module, whose go.mod pins what it needs.
crictl() {
  [[ " ${bins[*]} " == *" crictl "* ]] || return 0
  [ -x "$cache/crictl" ] && return 0
  local work
  work="$(dirname "$cache")/build-$KEY-crictl"
  rm -rf "$work" && mkdir -p "$work" "$cache"
  echo ">> building crictl v$CRICTL_VERSION from Go modules" >&2
  printf 'module podium.dev/hack/crictl\n\ngo 1.26.0\n\nrequire sigs.k8s.io/cri-tools v%s\n' "$CRICTL_VERSION" > "$work/go.mod"
  cat > "$work/tools.go" <<'GO'
//go:build tools

package tools

import _ "sigs.k8s.io/cri-tools/cmd/crictl"
GO
  (cd "$work" && GOFLAGS=-mod=mod go mod tidy >&2 && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=v$CRICTL_VERSION" \
      -o "$cache/crictl.tmp" sigs.k8s.io/cri-tools/cmd/crictl)
  mv "$cache/crictl.tmp" "$cache/crictl"
  rm -rf "$work"
}

if ! have_all "$cache"; then
  k8s
  etcd
  crictl
fi

mkdir -p "$dest"
for b in "${bins[@]}"; do cp "$cache/$b" "$dest/$b.tmp" && mv "$dest/$b.tmp" "$dest/$b"; done
echo "$dest"
