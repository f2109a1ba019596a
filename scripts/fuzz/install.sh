#!/usr/bin/env bash
# Installs the fuzz suite's Python tools (requirements/fuzz.txt) into the project-local .venv/.
# Creates the venv when missing; a second run only checks that the pinned versions are installed.
set -euo pipefail
cd "$(dirname "$0")/../.."

fail() { echo "fuzz-install: $*" >&2; exit 1; }

python=${PYTHON:-python3}
command -v "$python" >/dev/null || fail "Python 3.11+ is required for the fuzz suite; $python was not found on PATH."
"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
  || fail "Python 3.11+ is required for the fuzz suite; found $("$python" --version 2>&1)."
"$python" -c 'import venv, ensurepip' 2>/dev/null \
  || fail "Python's venv module is missing (Debian/Ubuntu: sudo apt-get install -y python3-venv)."

if [ ! -x .venv/bin/python ]; then
  echo "fuzz-install: creating .venv/"
  "$python" -m venv .venv
fi
# pip skips what is already installed at the pinned version, so this is cheap on a second run.
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements/fuzz.txt
.venv/bin/schemathesis --version
