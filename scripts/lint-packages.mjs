#!/usr/bin/env node
/**
 * Checks every published package (scripts/packages.mjs) as a registry would see it, after
 * `npm run build`: publint in strict mode, and Are the Types Wrong on the packed tarball with the
 * ESM-only profile (the packages ship no CommonJS). Exits 1 when either reports anything.
 *
 * Usage: npm run build && npm run lint:package
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PACKAGES } from './packages.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);

let failed = false;
for (const { dir } of PACKAGES) {
  const path = join(root, 'packages', dir);
  if (!existsSync(join(path, 'dist'))) {
    console.error(`lint-packages: packages/${dir} has no dist/: run npm run build first`);
    process.exit(1);
  }
  for (const [tool, args] of [
    ['publint', ['--strict', path]],
    ['attw', ['--pack', path, '--profile', 'esm-only']],
  ]) {
    console.log(`lint-packages: ${tool} packages/${dir}`);
    const result = spawnSync(bin(tool), args, { stdio: 'inherit', cwd: root });
    if (result.status !== 0) failed = true;
  }
}
process.exit(failed ? 1 : 0);
