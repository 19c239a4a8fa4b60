#!/usr/bin/env bash
# Wall time from creating 10,000 LeaderboardRows (16 concurrent writers) to every one
# of them Valid and in its board's rank index, on the local control plane (envtest:
# kube-apiserver + etcd from KUBEBUILDER_ASSETS) with the real controllers.
# PODIUM_BENCH_ROWS changes the number of rows.
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${KUBEBUILDER_ASSETS:=$(bash hack/controlplane.sh)}"
export KUBEBUILDER_ASSETS
go test -tags bench -run '^TestBenchRowsValid$' -count=1 -timeout 15m ./controllers/ -v 2>&1 |
	grep -E '^(rows-valid:|--- FAIL|FAIL|panic|\s+bench_rows_test.go)' || { echo "rows-valid: benchmark failed" >&2; exit 1; }
