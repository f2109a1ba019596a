#!/usr/bin/env bash
# Checks the starter path exactly as the README gives it, against the packages as they would be
# published: builds the @tessera-fanout packages (packages/), publishes them to a local npm registry on 127.0.0.1
# (verdaccio, pinned in scripts/registry/package.json and installed there), then runs the README's
# "Your own worker kind in ten minutes" commands verbatim in an empty directory, from `npx … init`
# to a finished run. The project that `init` made is then typechecked, synthesized and run once more
# with vendor/ left unread.
#
#   scripts/starter-check.sh              every step
#   scripts/starter-check.sh --offline    stop after the README's `npm test` (no Java needed)
#   KEEP=1 scripts/starter-check.sh       keep the temporary directory and print where it is
#   SKIP_BUILD=1 scripts/starter-check.sh publish the packages/*/dist/ already built (after `npm run build`)
#
# Only @tessera-fanout packages come from what this script published; the registry fetches every
# other package from the public registry, and npm runs with a cache of its own in the temporary
# directory, so nothing installed before (an npx cache, a global package) stands in for the
# published one. Exit status: the first step that failed.
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
registry_pid=""
cleanup() {
  if [[ -n "$registry_pid" ]]; then kill "$registry_pid" 2>/dev/null || true; wait "$registry_pid" 2>/dev/null || true; fi
  if [[ "${KEEP:-}" == 1 ]]; then echo "starter-check: kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

step() { echo "starter-check: $*"; }

step "install the local registry (scripts/registry)"
if [[ ! -x "$root/scripts/registry/node_modules/.bin/verdaccio" ]]; then
  npm ci --prefix "$root/scripts/registry" --no-audit --no-fund --loglevel=error
fi

step "start it on 127.0.0.1"
mkdir "$work/registry"
cp "$root/scripts/registry/config.yaml" "$work/registry/config.yaml"
port="$(node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });')"
registry="http://127.0.0.1:$port/"
"$root/scripts/registry/node_modules/.bin/verdaccio" --config "$work/registry/config.yaml" --listen "127.0.0.1:$port" >"$work/registry/log" 2>&1 &
registry_pid=$!
for _ in $(seq 1 120); do
  if curl -fsS -o /dev/null "${registry}-/ping" 2>/dev/null; then break; fi
  kill -0 "$registry_pid" 2>/dev/null || { cat "$work/registry/log" >&2; echo "starter-check: the registry exited" >&2; exit 1; }
  sleep 0.5
done
curl -fsS -o /dev/null "${registry}-/ping" || { cat "$work/registry/log" >&2; echo "starter-check: the registry did not answer in 60 s" >&2; exit 1; }
step "registry $registry (pid $registry_pid)"

step "build the packages and publish them there"
cd "$root"
if [[ "${SKIP_BUILD:-}" != 1 ]]; then npm run --silent build; fi
mkdir "$work/pack"
npm pack --workspaces --silent --pack-destination "$work/pack" >/dev/null
# The registry lets anyone publish @tessera-fanout packages; npm still wants a token to send.
printf '//127.0.0.1:%s/:_authToken=local-registry\n' "$port" >"$work/registry/publish.npmrc"
for tarball in "$work"/pack/*.tgz; do
  step "  publish $(basename "$tarball")"
  npm publish "$tarball" --registry "$registry" --userconfig "$work/registry/publish.npmrc" --ignore-scripts --loglevel=error >/dev/null
done

# Every npm and npx below, the README's own included, asks this registry, with a cache of its own.
# npx installs the package without asking, as it does for anyone whose standard input is not a
# terminal, also where a user's .npmrc says `yes=false`. Every install is engine-strict: an
# `engines` range that the Node in use does not meet, in any package installed, fails it.
export npm_config_registry="$registry" npm_config_cache="$work/npm-cache" npm_config_update_notifier=false npm_config_yes=true npm_config_engine_strict=true

# The README's commands, verbatim: the sh block under "Your own worker kind in ten minutes".
readme_commands="$(awk '/^## Your own worker kind in ten minutes/ { section = 1; next } section && /^```sh$/ { block = 1; next } block && /^```$/ { exit } block { print }' "$root/README.md")"
[[ -n "$readme_commands" ]] || { echo "starter-check: no sh block under \"Your own worker kind in ten minutes\" in README.md" >&2; exit 1; }
if [[ "$offline" == true ]]; then
  # Up to and including `npm test`: `tessera run` needs Java for DynamoDB Local.
  readme_commands="$(printf '%s\n' "$readme_commands" | sed '/tessera run/,$d')"
fi
mkdir "$work/user"
cd "$work/user"
step "the README's commands, in an empty directory:"
printf '%s\n' "$readme_commands" | sed 's/^/starter-check:   /'
bash -euo pipefail -c "$readme_commands"

project="$(find "$work/user" -mindepth 1 -maxdepth 1 -type d | head -n 1)"
[[ -f "$project/package.json" ]] || { echo "starter-check: the README's commands made no project in $work/user" >&2; exit 1; }
cd "$project"

step "typecheck"
npx tsc --noEmit

if [[ "$offline" == true ]]; then
  step "done (offline: cdk synth and tessera run skipped)"
  exit 0
fi

step "cdk synth"
npx cdk synth --quiet >/dev/null

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
