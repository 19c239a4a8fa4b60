#!/usr/bin/env bash
# Hosted secrets (issue 5): latency of the write paths over HTTP against the real
# apiserver (a first store plus a revoke, also of a registry credential; a confirmed
# supersede), of GET /v1/secrets for
# an org with 100 secrets and of preflight (both from the cache), and the pure preflight
# evaluation of 10 agents and 2,000 tasks. Env: KUBEBUILDER_ASSETS (control plane),
# N (iterations per benchmark, default 100).
set -euo pipefail
cd "$(dirname "$0")/../.."
export KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS:-$(bash hack/controlplane.sh)}
N=${N:-100}

echo "== hosted secrets over HTTP (real apiserver, one operator replica), ${N} iterations"
go test ./internal/secrets -run '^$' -bench . -benchtime "${N}x" -count 1 | awk '
  /^Benchmark/ { printf "%-28s %10.2f ms/op\n", $1, $3 / 1e6 }'
echo "== preflight evaluation (pure)"
go test ./internal/preflight -run '^$' -bench Evaluate -benchtime 2000x -benchmem -count 1 | awk '
  /^Benchmark/ { printf "%-28s %10.1f us/op %8s B/op %6s allocs/op\n", $1, $3 / 1e3, $5, $7 }'
