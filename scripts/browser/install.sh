#!/usr/bin/env bash
# Installs the headless browser the browser tests drive: Debian's `chromium` package, at
# /usr/bin/chromium. Nothing else downloads a browser: the tests use playwright-core with
# executablePath, which never fetches a build of its own.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "browser: /usr/bin/chromium is missing and apt-get is not available; install Chromium from your distribution's packages." >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
/usr/bin/chromium --version
