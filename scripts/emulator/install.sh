#!/usr/bin/env bash
# Installs the emulator lane's AWS emulator (requirements/emulator.txt) into the project-local
# .venv-emulator/. Creates the venv when missing; a second run only checks the pinned versions.
set -euo pipefail
cd "$(dirname "$0")/../.."

fail() { echo "emulator-install: $*" >&2; exit 1; }

python=${PYTHON:-python3}
command -v "$python" >/dev/null || fail "Python 3.11+ is required for the emulator lane; $python was not found on PATH."
"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
  || fail "Python 3.11+ is required for the emulator lane; found $("$python" --version 2>&1)."
"$python" -c 'import venv, ensurepip' 2>/dev/null \
  || fail "Python's venv module is missing (Debian/Ubuntu: sudo apt-get install -y python3-venv)."

if [ ! -x .venv-emulator/bin/python ]; then
  echo "emulator-install: creating .venv-emulator/"
  "$python" -m venv .venv-emulator
fi
# --no-deps: the requirements file is the whole closure, so nothing unpinned comes in.
.venv-emulator/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -r requirements/emulator.txt
.venv-emulator/bin/python -m pip check --disable-pip-version-check >/dev/null \
  || fail "requirements/emulator.txt is not a complete set: $(.venv-emulator/bin/python -m pip check 2>&1 | head -n 3)"
.venv-emulator/bin/python -c 'import importlib.metadata as m; print("emulator-install: ministack", m.version("ministack"))'
