#!/usr/bin/env bash
# Proves that the architecture gates of .golangci.yml fail on a violation: it plants one
# deliberately bad file per rule, runs golangci-lint on the planted packages with only
# those linters, and fails unless every rule reports. The files are removed whatever
# happens. The planted violations:
#   internal/cli            imports internal/secrets            cli-imports-no-server-package
#   api/v1alpha1            imports internal/lru                api-imports-nothing-of-ours
#   api/v1alpha1            a field without a json tag          kubeapilinter (jsontags)
#   internal/ranking        imports internal/secrets            rule-packages-import-nothing-above-them
#   internal/ranking        a function of 61 lines              funlen
#   cmd/podium (non-test)   imports internal/testenv            testenv-only-in-tests-and-hack
#   controllers             imports internal/secretsapi         controllers-import-no-http-handler
#   internal/httpapi        imports controllers                 http-handlers-import-no-controller
#   internal/web            imports internal/secrets            public-read-imports-no-secret-store
# Usage: bash hack/depguard-check.sh   (after `make lint` has built bin/golangci-lint)
set -euo pipefail
cd "$(dirname "$0")/.."
lint=${GOLANGCI_LINT:-bin/golangci-lint}
cli=internal/cli/zz_depguard_probe.go
api=api/v1alpha1/zz_depguard_probe.go
rule=internal/ranking/zz_depguard_probe.go
tenv=cmd/podium/zz_depguard_probe.go
ctrl=controllers/zz_depguard_probe.go
handler=internal/httpapi/zz_depguard_probe.go
public=internal/web/zz_depguard_probe.go
trap 'rm -f "$cli" "$api" "$rule" "$tenv" "$ctrl" "$handler" "$public"' EXIT
cat >"$cli" <<'GO'
package cli

import "podium.dev/podium/internal/secrets"

var _ = secrets.MaxValueBytes
GO
cat >"$api" <<'GO'
package v1alpha1

import "podium.dev/podium/internal/lru"

var _ = lru.New[string, string]

// ProbeSpec is a planted API type whose field has no json tag.
type ProbeSpec struct {
	// Untagged has no json tag.
	// +optional
	Untagged string
}
GO
{
	echo 'package ranking'
	echo
	echo 'import "podium.dev/podium/internal/secrets"'
	echo
	echo 'var _ = secrets.MaxValueBytes'
	echo
	echo '// probeLong is 61 lines long.'
	echo 'func probeLong() int {'
	echo '	n := 0'
	for _ in $(seq 59); do echo '	n++'; done
	echo '	return n'
	echo '}'
	echo
	echo 'var _ = probeLong'
} >"$rule"
cat >"$tenv" <<'GO'
package main

import "podium.dev/podium/internal/testenv"

var _ = testenv.RepoRoot
GO
cat >"$ctrl" <<'GO'
package controllers

import "podium.dev/podium/internal/secretsapi"

var _ = secretsapi.API{}
GO
cat >"$handler" <<'GO'
package httpapi

import "podium.dev/podium/controllers"

var _ = controllers.DefaultRowWorkers
GO
cat >"$public" <<'GO'
package web

import "podium.dev/podium/internal/secrets"

var _ = secrets.MaxValueBytes
GO
out=$("$lint" run --allow-parallel-runners --enable-only depguard,funlen,kubeapilinter \
	./internal/cli/ ./api/v1alpha1/ ./internal/ranking/ ./cmd/podium/ ./controllers/ ./internal/httpapi/ ./internal/web/ 2>&1 || true)
echo "$out"
fail=0
for want in cli-imports-no-server-package api-imports-nothing-of-ours rule-packages-import-nothing-above-them \
	testenv-only-in-tests-and-hack controllers-import-no-http-handler http-handlers-import-no-controller \
	public-read-imports-no-secret-store "probeLong' is too long" "jsontags: field ProbeSpec.Untagged"; do
	if ! grep -qF "$want" <<<"$out"; then
		echo "gate \"$want\" did not report its planted violation" >&2
		fail=1
	fi
done
exit $fail
