#!/usr/bin/env node
/**
 * Builds the published package into dist/: `tsc -p tsconfig.build.json` emits ESM and .d.ts
 * with the source tree preserved (dist/lib/..., dist/functions/...), then this script
 *
 * 1. rewrites relative import specifiers to the file they name (`'../ledger'` →
 *    `'../ledger/index.js'`, `'./errors'` → `'./errors.js'`), because the sources are written for
 *    bundler resolution and Node's ESM loader (and TypeScript's node16 resolution of the .d.ts)
 *    wants full paths; a specifier that names no emitted file fails the build;
 * 2. copies the non-TypeScript files the code reads at run time, found next to it by
 *    `import.meta.url` (RUNTIME_ASSETS).
 *
 * Usage: node scripts/build-package.mjs   (npm run build)
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');

/** Source files that are not TypeScript but are read at run time, relative to the root. */
const RUNTIME_ASSETS = ['lib/local/java'];

/** `from '…'`, `import '…'`, `import('…')` and `export … from '…'` with a relative specifier. */
const SPECIFIER = /(\bfrom\s*|\bimport\s*\(?\s*)(['"])(\.{1,2}\/[^'"]*)\2/g;

const walk = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? walk(path) : [path];
  });

const isFile = (path) => existsSync(path) && statSync(path).isFile();

/** The specifier that names an emitted module, or undefined when none exists. */
export const resolveSpecifier = (fromFile, specifier) => {
  const base = resolve(dirname(fromFile), specifier);
  if (/\.(m?js|json)$/.test(specifier) && isFile(base)) return specifier;
  if (isFile(`${base}.js`)) return `${specifier}.js`;
  if (isFile(join(base, 'index.js'))) return `${specifier.replace(/\/$/, '')}/index.js`;
  return undefined;
};

export const rewriteFile = (file) => {
  const text = readFileSync(file, 'utf8');
  const unresolved = [];
  const jsTwin = file.endsWith('.d.ts') ? `${file.slice(0, -'.d.ts'.length)}.js` : file;
  const rewritten = text.replace(SPECIFIER, (whole, lead, quote, specifier) => {
    const fixed = resolveSpecifier(jsTwin, specifier);
    if (fixed === undefined) {
      unresolved.push(specifier);
      return whole;
    }
    return `${lead}${quote}${fixed}${quote}`;
  });
  if (rewritten !== text) writeFileSync(file, rewritten);
  return unresolved;
};

const main = () => {
  rmSync(dist, { recursive: true, force: true });
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  const problems = [];
  for (const file of walk(dist)) {
    if (!/\.(js|d\.ts)$/.test(file)) continue;
    for (const specifier of rewriteFile(file)) problems.push(`${relative(root, file)}: '${specifier}' names no emitted file`);
  }
  for (const asset of RUNTIME_ASSETS) cpSync(join(root, asset), join(dist, asset), { recursive: true });
  if (problems.length > 0) {
    console.error(problems.join('\n'));
    process.exit(1);
  }
};

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
