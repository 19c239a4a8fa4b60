#!/usr/bin/env bash
# Runs every benchmark script in hack/bench/ in name order and prints their figures.
# `make bench` sets KUBEBUILDER_ASSETS (the local control plane) and PODIUM_BIN.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
for script in hack/bench/*.sh; do
  [ -e "$script" ] || continue
  echo
  echo "================ $(basename "$script") ================"
  start=$(date +%s)
  if ! bash "$script"; then
    echo "!! $script failed" >&2
    status=1
  fi
  echo "---------------- $(basename "$script"): $(( $(date +%s) - start ))s"
done
exit $status
