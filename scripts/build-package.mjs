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
 * `build({ outDir, declarationOnly })` does the same elsewhere (the API report test builds the
 * declarations into a temporary directory).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Source files that are not TypeScript but are read at run time, relative to the root:
 * DynamoDB Local's launcher, and cdk.json, whose feature flags the local cloud synthesizes the
 * construct with (lib/infra/cdk-context.ts), so an installed package runs the template it was
 * tested with.
 */
const RUNTIME_ASSETS = ['lib/local/java', 'cdk.json'];

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
  const emitted = (path) => isFile(path) || isFile(path.replace(/\.js$/, '.d.ts'));
  if (/\.(m?js|json)$/.test(specifier) && emitted(base)) return specifier;
  if (emitted(`${base}.js`)) return `${specifier}.js`;
  if (emitted(join(base, 'index.js'))) return `${specifier.replace(/\/$/, '')}/index.js`;
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

/**
 * Emits the package into `outDir` (dist/ by default) and rewrites its specifiers; throws, naming
 * each one, when a specifier names no emitted file.
 */
export const build = ({ outDir = join(root, 'dist'), declarationOnly = false } = {}) => {
  rmSync(outDir, { recursive: true, force: true });
  const only = declarationOnly ? ['--emitDeclarationOnly'] : [];
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', outDir, ...only], {
    stdio: 'inherit',
  });
  const problems = [];
  for (const file of walk(outDir)) {
    if (!/\.(js|d\.ts)$/.test(file)) continue;
    for (const specifier of rewriteFile(file)) problems.push(`${relative(outDir, file)}: '${specifier}' names no emitted file`);
  }
  if (!declarationOnly) for (const asset of RUNTIME_ASSETS) cpSync(join(root, asset), join(outDir, asset), { recursive: true });
  if (problems.length > 0) throw new Error(`build-package: unresolved import specifiers\n${problems.join('\n')}`);
};

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) build();
