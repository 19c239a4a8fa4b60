#!/usr/bin/env bash
# Secret delivery and run Secret isolation: latency of creating Jobs and Pods through the
# real apiserver as an org member, p50 and p99, first without the run Secret admission
# policies (config/admission/run_secret_*.yaml; their bindings deleted), then with them:
# a Job annotated hub.podium.dev/secrets (the operator's webhook resolves two names,
# creates the run Secret and records last_used_at), an unannotated Job (never sent to the
# webhook), and an unannotated Pod naming no run Secret. The namespace holds five Secrets
# granted to hosted secrets (the granted Secret policy's params). Env: KUBEBUILDER_ASSETS,
# N (objects per case, default 200).
set -euo pipefail
cd "$(dirname "$0")/../.."
export KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS:-$(bash hack/controlplane.sh)}
N=${N:-200}

echo "== create latency through the apiserver (one operator replica), ${N} objects each; $(uptime | sed 's/.*load/load/')"
go test ./internal/delivery -run '^$' -bench Admission -benchtime "${N}x" -count 1 | awk '
  /^BenchmarkAdmission/ {
    p50 = ""; p99 = ""
    for (i = 1; i <= NF; i++) { if ($i == "p50-ms") p50 = $(i-1); if ($i == "p99-ms") p99 = $(i-1) }
    printf "%-60s p50 %7.2f ms   p99 %7.2f ms\n", $1, p50, p99 }'
echo "== $(uptime | sed 's/.*load/load/')"
