#!/usr/bin/env bash
# What a row's change history costs: bytes a row takes in etcd before and after 10
# changes (scaled to 100,000 rows against etcd's 2 GiB quota), the controller's status
# patch size, and changes observed per second, on the local control plane with the real
# controllers. PODIUM_BENCH_HISTORY_ROWS changes the number of rows (default 500);
# the Go benchmarks of internal/rowhistory give the controller's CPU per change.
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${KUBEBUILDER_ASSETS:=$(bash hack/controlplane.sh)}"
export KUBEBUILDER_ASSETS
go test -tags bench -run '^TestBenchRowHistory$' -count=1 -timeout 20m ./controllers/ -v 2>&1 |
	grep -E '^(row-history:|--- FAIL|FAIL|panic|\s+bench_history_test.go)' || { echo "row-history: benchmark failed" >&2; exit 1; }
go test -run '^$' -bench 'BenchmarkRecord' -benchmem -count=1 ./internal/rowhistory/ | grep -E '^Benchmark' | sed 's/^/row-history: /'
