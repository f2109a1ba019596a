#!/usr/bin/env bash
# Installs the emulator lane's AWS emulator (requirements/emulator.txt) into the project-local
# .venv-emulator/. Creates the venv when missing; a second run only checks the pinned versions.
set -euo pipefail
cd "$(dirname "$0")/../.."

fail() { echo "emulator-install: $*" >&2; exit 1; }

# shellcheck source=../lib/python-venv.sh
source scripts/lib/python-venv.sh
ensure_venv emulator-install .venv-emulator "the emulator lane"
# --no-deps: the requirements file is the whole closure, so nothing unpinned comes in.
.venv-emulator/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -r requirements/emulator.txt
.venv-emulator/bin/python -m pip check --disable-pip-version-check >/dev/null \
  || fail "requirements/emulator.txt is not a complete set: $(.venv-emulator/bin/python -m pip check 2>&1 | head -n 3)"
.venv-emulator/bin/python -c 'import importlib.metadata as m; print("emulator-install: ministack", m.version("ministack"))'
