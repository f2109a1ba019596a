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

step "a run that leaves vendor/ unread: incomplete, with a lines_not_inspected gap naming its lines"
set +e
npx tessera run requests/todo-review-skip-vendor.json --json >"$work/skip-vendor.json"
status=$?
set -e
node --input-type=commonjs - "$work/skip-vendor.json" "$status" <<'CHECK'
const [file, status] = process.argv.slice(2);
const run = JSON.parse(require('node:fs').readFileSync(file, 'utf8'));
const coverage = run.answer?.coverage;
const gap = coverage?.gaps?.find((g) => g.files?.some((f) => f.path === 'vendor/left-pad.js' && JSON.stringify(f.lines) === '[[1,4]]'));
const problem = coverage?.problems?.find((p) => p.code === 'lines_not_inspected');
const problems = [];
if (coverage?.complete !== false) problems.push(`complete is ${coverage?.complete}, expected false`);
if (!gap) problems.push(`no gap names vendor/left-pad.js lines 1-4: ${JSON.stringify(coverage?.gaps)}`);
if (!problem) problems.push(`no lines_not_inspected problem: ${JSON.stringify(coverage?.problems)}`);
if (problems.length > 0) {
  console.error(`starter-check: the skip-vendor run (exit ${status}) is not what it should be:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`starter-check: run ${run.runId} ${run.status}; complete false; gap ${JSON.stringify(gap)}`);
CHECK

step "done"
