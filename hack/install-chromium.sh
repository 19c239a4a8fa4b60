#!/usr/bin/env bash
# Installs headless Chromium from Debian's packages for the browser tests of the web
# pages (internal/web). Nothing else is downloaded: no browser from any other source.
# Idempotent: does nothing when /usr/bin/chromium already exists.
set -euo pipefail

if [[ -x /usr/bin/chromium ]]; then
	exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then
	sudo="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null

/usr/bin/chromium --version
