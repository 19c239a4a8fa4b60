#!/usr/bin/env bash
# 40-cli: time `podium hub leaderboard row create` of 20 x 500 rows against the local
# control plane (operator running), beside `kubectl apply -f` of one file with the same
# 10,000 rows. Needs KUBEBUILDER_ASSETS; uses $PODIUM_BIN/podium when set.
set -euo pipefail
cd "$(dirname "$0")/../.."
echo "== 40-cli: podium row create vs kubectl apply"
if ! out=$(go test ./internal/cli/ -run '^$' -bench '^BenchmarkCLIRows$' -benchtime 1x -count 1 -timeout 10m 2>&1); then
  echo "$out"
  exit 1
fi
grep -E '^(podium|kubectl) ' <<<"$out"
