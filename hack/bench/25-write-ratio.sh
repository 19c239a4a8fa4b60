#!/usr/bin/env bash
# 25-write-ratio: rows written with `podium hub leaderboard row create` and with
# `kubectl apply -f`, timed until the public read serves them all, against, in the same
# run: the floor of a row (its create and one status write through the shipped
# admission, no operator: the policies, and the shipped webhook configuration answered
# by a webhook that only answers; by 16 writers, and with kubectl apply for the rows
# kubectl applies), and ConfigMaps of a row's bytes (16 writers, and through kubectl
# apply). Each of Podium's paths runs between two floors of its own, right before and
# right after it, and is compared with their mean. The last line ("summary") has raw
# creates, the floor, Podium's path and its ratio to the floor (docs/performance.md,
# "Rows in"). Prints the apiserver's writes and reads per object, a stored row's mean
# size on each floor and path (the same bytes?), the load average
# before and after, and the floor with a bare watcher writing each status as the rows
# are created (what any operator adds, nothing of Podium's), also around the CLI's
# path; and the CLI's commands again as an org owner's ServiceAccount (no restore verb,
# so each row is sent to the row webhook for its id), between floors of its own. Needs KUBEBUILDER_ASSETS; uses $PODIUM_BIN/podium when set.
# PODIUM_BENCH_WRITE_ROWS sets the number of rows (default 3,000, a multiple of 500);
# PODIUM_BENCH_PPROF=<dir> writes CPU profiles of the apiserver and of the bench's
# process (the operator) per phase there (apiserver-<phase>.pprof,
# operator-<phase>.pprof; phases watched, floor, cli, owner, kfloor, kubectl: the floors'
# profiles are of their first run).
set -euo pipefail
cd "$(dirname "$0")/../.."
echo "== 25-write-ratio: rows served vs the apiserver's create rate ($(uptime | sed 's/.*load average/load average/'))"
if ! out=$(go test ./internal/cli/ -run '^$' -bench '^BenchmarkWriteRatio$' -benchtime 1x -count 1 -timeout 20m 2>&1); then
  echo "$out"
  exit 1
fi
grep -E '^write-ratio: ' <<<"$out"
echo "== load average after: $(uptime | sed 's/.*load average: //')"
