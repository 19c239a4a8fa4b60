#!/usr/bin/env bash
# Measures repeated code between the tracked non-test, non-generated Go files: copies
# them to a scratch directory and runs the `duplicates` tool on it (docs/development.md,
# "Repeated code"). Not part of make test; skips when the tool is not installed.
set -euo pipefail

if ! command -v duplicates >/dev/null 2>&1; then
	echo "hack/duplicates.sh: the duplicates tool is not installed; skipped"
	exit 0
fi

root="$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

git -C "$root" ls-files '*.go' | grep -v _test.go | grep -v zz_generated | while read -r f; do
	mkdir -p "$scratch/$(dirname "$f")"
	cp "$root/$f" "$scratch/$f"
done
duplicates --repo "$scratch" --most 200 --seconds 200
