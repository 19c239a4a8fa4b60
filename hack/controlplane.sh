#!/usr/bin/env bash
# Builds the pinned local control plane (kube-apiserver, etcd, kubectl) from Go modules
# into bin/k8s/<version>/, only when missing. A copy is kept in the user cache directory,
# keyed by version, so a fresh clone on the same machine reuses it instead of rebuilding.
# Prints the directory holding the binaries (usable as KUBEBUILDER_ASSETS).
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-1.36.3}"   # k8s.io/kubernetes; staging modules at v0.36.3
ETCD_VERSION="${ETCD_VERSION:-3.6.8}"  # the etcd that k8s.io/kubernetes v1.36.3 requires
KEY="${K8S_VERSION}-etcd${ETCD_VERSION}"

root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/bin/k8s/$KEY"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/podium/k8s/$KEY"
bins=(kube-apiserver etcd kubectl)

have_all() { local d=$1 b; for b in "${bins[@]}"; do [ -x "$d/$b" ] || return 1; done; }

if have_all "$dest"; then echo "$dest"; exit 0; fi

mkdir -p "$(dirname "$cache")"
exec 9>"$(dirname "$cache")/.build.lock"
flock 9   # one build at a time per machine

if ! have_all "$cache"; then
  work="$(dirname "$cache")/build-$KEY"
  rm -rf "$work" && mkdir -p "$work/apiserver" "$work/etcd" "$cache.tmp"
  minor="${K8S_VERSION#*.}"; minor="${minor%%.*}"
  staging="0.${K8S_VERSION#*.}"

  echo ">> building kube-apiserver and kubectl v$K8S_VERSION from Go modules (a cold build takes a while)" >&2
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
  (cd "$work/apiserver" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $ver" \
      -o "$cache.tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver \
   && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $ver" \
      -o "$cache.tmp/kubectl" k8s.io/kubernetes/cmd/kubectl)

  echo ">> building etcd v$ETCD_VERSION from Go modules" >&2
  cat > "$work/etcd/main.go" <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  printf 'module podium.dev/hack/etcd\n\ngo 1.26.0\n\nrequire go.etcd.io/etcd/server/v3 v%s\n' "$ETCD_VERSION" > "$work/etcd/go.mod"
  (cd "$work/etcd" && go mod tidy >&2 && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$cache.tmp/etcd" .)

  rm -rf "$cache" && mv "$cache.tmp" "$cache" && rm -rf "$work"
fi

mkdir -p "$dest"
for b in "${bins[@]}"; do cp "$cache/$b" "$dest/$b.tmp" && mv "$dest/$b.tmp" "$dest/$b"; done
echo "$dest"
