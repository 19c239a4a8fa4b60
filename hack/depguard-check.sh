#!/usr/bin/env bash
# Proves that the architecture's depguard rules (.golangci.yml) fail on a violation:
# it adds one deliberately bad file to internal/cli (importing a server package) and one
# to api/v1alpha1 (importing a package of ours), runs golangci-lint's depguard on the two
# packages, and fails unless both rules report. The files are removed whatever happens.
# Usage: bash hack/depguard-check.sh   (after `make lint` has built bin/golangci-lint)
set -euo pipefail
cd "$(dirname "$0")/.."
lint=${GOLANGCI_LINT:-bin/golangci-lint}
cli=internal/cli/zz_depguard_probe.go
api=api/v1alpha1/zz_depguard_probe.go
trap 'rm -f "$cli" "$api"' EXIT
cat >"$cli" <<'GO'
package cli

import "podium.dev/podium/internal/secrets"

var _ = secrets.MaxValueBytes
GO
cat >"$api" <<'GO'
package v1alpha1

import "podium.dev/podium/internal/lru"

var _ = lru.New[string, string]
GO
out=$("$lint" run --enable-only depguard ./internal/cli/ ./api/v1alpha1/ 2>&1 || true)
echo "$out"
fail=0
for rule in cli-imports-no-server-package api-imports-nothing-of-ours; do
	if ! grep -q "$rule" <<<"$out"; then
		echo "depguard rule $rule did not report its violation" >&2
		fail=1
	fi
done
exit $fail
