#!/usr/bin/env bash
# Checks the starter project (examples/starter) against the package as it would be published:
# builds and packs @tessera-fanout/tessera, installs the tarball into a copy of the starter, then
# runs what its README asks a newcomer to run: typecheck, tests, `cdk synth`, one `tessera run`.
#
#   scripts/starter-check.sh              every step
#   scripts/starter-check.sh --offline    skip `cdk synth` and `tessera run` (no Java needed)
#   KEEP=1 scripts/starter-check.sh       keep the temporary copy and print where it is
#   SKIP_BUILD=1 scripts/starter-check.sh pack the dist/ already built (after `npm run build`)
#
# npm installs from its local cache when it can (--prefer-offline). Exit status: the first step
# that failed.
set -euo pipefail

offline=false
for arg in "$@"; do
  case "$arg" in
    --offline) offline=true ;;
    *) echo "usage: scripts/starter-check.sh [--offline]" >&2; exit 2 ;;
  esac
done

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/tessera-starter-XXXXXX")"
if [[ "${KEEP:-}" == 1 ]]; then echo "starter-check: working in $work"; else trap 'rm -rf "$work"' EXIT; fi

step() { echo "starter-check: $*"; }

step "build and pack the package"
cd "$root"
if [[ "${SKIP_BUILD:-}" != 1 ]]; then npm run --silent build; fi
npm pack --silent --pack-destination "$work" >/dev/null
tarball="$(ls "$work"/*.tgz)"

step "copy the starter and install the tarball"
mkdir "$work/starter"
tar -C "$root/examples/starter" --exclude=node_modules --exclude=cdk.out --exclude=.tessera --exclude=package-lock.json -cf - . | tar -C "$work/starter" -xf -
cd "$work/starter"
npm install --prefer-offline --no-audit --no-fund "$tarball"

step "typecheck"
npx tsc --noEmit

step "unit tests"
npx vitest run

if [[ "$offline" == true ]]; then
  step "done (offline: cdk synth and tessera run skipped)"
  exit 0
fi

step "cdk synth"
npx cdk synth --quiet >/dev/null

step "one run in the local cloud"
npx tessera run requests/todo-review.json

step "done"
