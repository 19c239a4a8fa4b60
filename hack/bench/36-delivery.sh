#!/usr/bin/env bash
# Secret delivery (issue 11): latency of creating a Job through the real apiserver as an
# org member, p50 and p99, for a Job annotated hub.podium.dev/secrets (the operator's
# webhook resolves two names, creates the run Secret and records last_used_at) beside an
# unannotated one (never sent to the webhook). Env: KUBEBUILDER_ASSETS, N (Jobs per case,
# default 200).
set -euo pipefail
cd "$(dirname "$0")/../.."
export KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS:-$(bash hack/controlplane.sh)}
N=${N:-200}

echo "== Job create latency through the apiserver (one operator replica), ${N} Jobs each"
go test ./internal/delivery -run '^$' -bench Admission -benchtime "${N}x" -count 1 | awk '
  /^BenchmarkAdmission/ {
    p50 = ""; p99 = ""
    for (i = 1; i <= NF; i++) { if ($i == "p50-ms") p50 = $(i-1); if ($i == "p99-ms") p99 = $(i-1) }
    printf "%-40s p50 %7.2f ms   p99 %7.2f ms\n", $1, p50, p99 }'
