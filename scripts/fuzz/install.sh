#!/usr/bin/env bash
# Installs the fuzz suite's Python tools (requirements/fuzz.txt) into the project-local .venv/.
# Creates the venv when missing; a second run only checks that the pinned versions are installed.
set -euo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=../lib/python-venv.sh
source scripts/lib/python-venv.sh
ensure_venv fuzz-install .venv "the fuzz suite"
# pip skips what is already installed at the pinned version, so this is cheap on a second run.
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements/fuzz.txt
.venv/bin/schemathesis --version
