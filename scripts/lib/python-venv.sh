# Sourced by the install scripts of the project's Python tools (scripts/fuzz, scripts/emulator).
# ensure_venv LABEL DIR PURPOSE: checks for Python 3.11+ with its venv module ($PYTHON, default
# python3), then creates the project-local virtual environment DIR when it is missing. Errors
# name LABEL and PURPOSE and exit 1.
ensure_venv() {
  local label=$1 dir=$2 purpose=$3 python=${PYTHON:-python3}
  local problem=''
  if ! command -v "$python" >/dev/null; then
    problem="Python 3.11+ is required for $purpose; $python was not found on PATH."
  elif ! "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
    problem="Python 3.11+ is required for $purpose; found $("$python" --version 2>&1)."
  elif ! "$python" -c 'import venv, ensurepip' 2>/dev/null; then
    problem="Python's venv module is missing (Debian/Ubuntu: sudo apt-get install -y python3-venv)."
  fi
  if [ -n "$problem" ]; then
    echo "$label: $problem" >&2
    exit 1
  fi
  if [ ! -x "$dir/bin/python" ]; then
    echo "$label: creating $dir/"
    "$python" -m venv "$dir"
  fi
}
