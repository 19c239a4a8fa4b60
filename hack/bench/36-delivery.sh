#!/usr/bin/env bash
# Secret delivery and run Secret isolation: latency of creating Jobs and Pods through the
# real apiserver as an org member, p50 and p99, first without the run isolation admission
# policies (config/admission/run_*.yaml; their bindings deleted), then with them: an
# unannotated Job (never sent to the webhook), the same Job sent to a webhook that only
# answers (the floor of any webhook call: bench_floor_test.go), an unannotated Pod naming
# no Secret, and a
# Job annotated hub.podium.dev/secrets (the operator's webhook resolves two names; its run
# Secret and last_used_at are written after the answer). The namespace holds five Secrets
# granted to hosted secrets (podium-granted-*), adopted before measuring. The phase
# "before isolation" keeps the webhook's routing condition as shipped, which isolation
# extended (every pod spec naming a run Secret is routed): its share is measured last,
# the shipped condition against the one before isolation.
# Env: KUBEBUILDER_ASSETS, N (objects per case, default 200).
set -euo pipefail
cd "$(dirname "$0")/../.."
export KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS:-$(bash hack/controlplane.sh)}
N=${N:-200}

echo "== create latency through the apiserver (one operator replica), ${N} objects each; $(uptime | sed 's/.*load/load/')"
# Per case: p50 and p99 of the create call, then the means per create of where its time
# went, from the apiserver's and the operator's own histograms (bench_breakdown_test.go):
# the apiserver's handling, its mutating (admit: the webhook and its match conditions) and
# validating (validate: the admission policies) steps, the webhook call as the apiserver
# saw it, the webhook's handler in the operator, and etcd's create. Then the same creates
# interleaved (BenchmarkAdmission/interleaved/...: five rounds of both phases, the cases
# taking turns within a phase): p50 and p99 only, the figures to compare cases by.
PODIUM_BENCH_N="$N" go test ./internal/delivery -run '^$' -bench Admission -benchtime "${N}x" -count 1 | awk '
  /^BenchmarkAdmission/ {
    split("", m)
    for (i = 3; i < NF; i++) if ($(i+1) ~ /-ms$/) m[$(i+1)] = $i
    printf "%-68s p50 %6.2f  p99 %6.2f ms | apiserver %5.2f admit %5.2f validate %5.2f webhook %5.2f handler %5.2f floor %5.2f etcd %5.2f\n",
      $1, m["p50-ms"], m["p99-ms"], m["apiserver-ms"], m["admit-ms"], m["validate-ms"], m["webhook-ms"], m["handler-ms"], m["floor-ms"], m["etcd-ms"] }'
echo "== $(uptime | sed 's/.*load/load/')"
# The delivery webhook's routing step alone (BenchmarkRoutingCondition, bench_routing_test.go):
# the mean evaluation of its match conditions per unannotated Pod and Job create, as
# shipped and as before run isolation, in the same run; the apiserver evaluates it for
# every Pod, Job and template create of the cluster.
echo "== the webhook's routing condition, ${N} creates each; $(uptime | sed 's/.*load/load/')"
go test ./internal/delivery -run '^$' -bench RoutingCondition -benchtime "${N}x" -count 1 | awk '
  /^BenchmarkRoutingCondition/ {
    split("", m)
    for (i = 3; i < NF; i++) if ($(i+1) ~ /-ms$/) m[$(i+1)] = $i
    printf "%-40s shipped %6.3f  before isolation %6.3f ms per create\n", $1, m["shipped-ms"], m["pre-isolation-ms"] }'
echo "== $(uptime | sed 's/.*load/load/')"
