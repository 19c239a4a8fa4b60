#!/usr/bin/env bash
# 25-write-ratio: rows written with `podium hub leaderboard row create` and with
# `kubectl apply -f`, timed until the public read serves them all, against the rate
# the same apiserver creates ConfigMaps of a row's bytes in the same run (16 writers,
# and through kubectl apply). Prints the apiserver's writes per object. Needs
# KUBEBUILDER_ASSETS; uses $PODIUM_BIN/podium when set. PODIUM_BENCH_WRITE_ROWS sets the
# number of rows (default 3,000, a multiple of 500).
set -euo pipefail
cd "$(dirname "$0")/../.."
echo "== 25-write-ratio: rows served vs the apiserver's create rate ($(uptime | sed 's/.*load average/load average/'))"
if ! out=$(go test ./internal/cli/ -run '^$' -bench '^BenchmarkWriteRatio$' -benchtime 1x -count 1 -timeout 20m 2>&1); then
  echo "$out"
  exit 1
fi
grep -E '^write-ratio: ' <<<"$out"
echo "== load average after: $(uptime | sed 's/.*load average: //')"
