#!/usr/bin/env node
/**
 * Builds the published packages (scripts/packages.mjs, docs/packages.md) into packages/<dir>/dist/.
 *
 * 1. `tsc -p tsconfig.build.json` emits ESM and .d.ts for all of lib/ and functions/ into one tree,
 *    with the source layout preserved (lib/..., functions/...);
 * 2. relative import specifiers are rewritten to the file they name (`'../ledger'` →
 *    `'../ledger/index.js'`, `'./errors'` → `'./errors.js'`), because the sources are written for
 *    bundler resolution and Node's ESM loader (and TypeScript's node16 resolution of the .d.ts)
 *    wants full paths; a specifier that names no emitted file fails the build;
 * 3. each package gets the files it owns, at the same paths under its dist/, so a module finds its
 *    neighbours (`import.meta.url`) as it does in the repository. An import of a file another
 *    package owns becomes `<name>/internal/<path>` when the package uses that one, and fails the
 *    build otherwise;
 * 4. each package's runtime assets and the LICENSE are copied, and its re-export entries written;
 * 5. every package's bare imports are compared with its package.json: an import it does not
 *    declare, or a dependency nothing loads, fails the build.
 *
 * Usage: node scripts/build-package.mjs   (npm run build)
 * `build({ outDir, declarationOnly })` emits only the one tree (the API reports read it);
 * `buildPackages()` does everything.
 */
import { execFileSync } from 'node:child_process';
import { builtinModules } from 'node:module';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { ownerOf, PACKAGES, TEMPLATE_LEFT_OUT } from './packages.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

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
 * Emits lib/ and functions/ as one tree into `outDir` and rewrites its relative specifiers; throws,
 * naming each one, when a specifier names no emitted file.
 */
export const build = ({ outDir, declarationOnly = false }) => {
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
  if (problems.length > 0) throw new Error(`build-package: unresolved import specifiers\n${problems.join('\n')}`);
};

/** A package's manifest, packages/<dir>/package.json. */
export const manifestOf = (pkg) => JSON.parse(readFileSync(join(root, 'packages', pkg.dir, 'package.json'), 'utf8'));

/** The source path of an emitted file, relative to the tree, with `/`: `lib/ledger/index.ts` for `lib/ledger/index.js`. */
const sourcePathOf = (treePath) =>
  treePath
    .split(sep)
    .join('/')
    .replace(/\.d\.ts$|\.js$/, '.ts');

/** The npm package a bare specifier names: `@scope/name` or `name`; undefined for builtins and relative paths. */
const packageOfSpecifier = (specifier) => {
  if (specifier.startsWith('.') || specifier.startsWith('node:') || builtinModules.includes(specifier.split('/')[0])) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
};

/** The npm packages a JavaScript module imports, statically or with `import()`, as TypeScript's scanner reads them (comments and strings left out). */
const packagesImportedBy = (text) =>
  ts
    .preProcessFile(text, true, true)
    .importedFiles.map((file) => packageOfSpecifier(file.fileName))
    .filter((name) => name !== undefined);

/**
 * Copies one package's files out of the tree into its dist/, rewriting imports of its siblings'
 * files; returns the problems found and the npm packages its JavaScript imports.
 */
const splitPackage = (tree, pkg, names) => {
  const dist = join(root, 'packages', pkg.dir, 'dist');
  const problems = [];
  const imported = new Set();
  for (const file of walk(tree)) {
    const path = relative(tree, file);
    if (!/\.(js|d\.ts)$/.test(file) || ownerOf(sourcePathOf(path)) !== pkg) continue;
    const source = readFileSync(file, 'utf8');
    if (file.endsWith('.js')) for (const name of packagesImportedBy(source)) imported.add(name);
    const text = source.replace(SPECIFIER, (whole, lead, quote, specifier) => {
      const target = relative(tree, resolve(dirname(file), specifier));
      const owner = ownerOf(sourcePathOf(target));
      if (owner === pkg) return whole;
      if (owner === undefined || !pkg.uses.includes(owner.dir)) {
        problems.push(
          `${pkg.dir}: ${path} imports ${target}, which ${owner ? `belongs to ${owner.dir}, a package ${pkg.dir} may not use` : 'no package owns'}`,
        );
        return whole;
      }
      if (file.endsWith('.js')) imported.add(names.get(owner));
      return `${lead}${quote}${names.get(owner)}/internal/${target.split(sep).join('/').replace(/\.js$/, '')}${quote}`;
    });
    mkdirSync(dirname(join(dist, path)), { recursive: true });
    writeFileSync(join(dist, path), text);
  }
  return { dist, problems, imported };
};

/**
 * Builds every package of scripts/packages.mjs into packages/<dir>/dist/; throws with every
 * problem found (an import across the layering, an undeclared or unused dependency).
 *
 * @returns the packages built, each `{ dir, name, dist }`
 */
export const buildPackages = ({ tree = join(root, 'node_modules', '.cache', 'tessera-build') } = {}) => {
  build({ outDir: tree });
  const names = new Map(PACKAGES.map((pkg) => [pkg, manifestOf(pkg).name]));
  const problems = [];
  const built = [];
  for (const pkg of PACKAGES) {
    rmSync(join(root, 'packages', pkg.dir, 'dist'), { recursive: true, force: true });
    const { dist, problems: found, imported } = splitPackage(tree, pkg, names);
    problems.push(...found);
    // The licence travels with each package; the one in the repository's root is the source.
    cpSync(join(root, 'LICENSE'), join(root, 'packages', pkg.dir, 'LICENSE'));
    for (const asset of pkg.assets) {
      cpSync(join(root, asset), join(dist, asset), { recursive: true, filter: (source) => !TEMPLATE_LEFT_OUT.includes(basename(source)) });
    }
    for (const [entry, of] of Object.entries(pkg.reexports)) {
      const target = names.get(PACKAGES.find((other) => other.dir === of));
      imported.add(target);
      for (const extension of ['js', 'd.ts']) writeFileSync(join(dist, `${entry}.${extension}`), `export * from '${target}';\n`);
    }
    const manifest = manifestOf(pkg);
    // A package's own bin/ is shipped as written, next to dist/.
    const bin = join(root, 'packages', pkg.dir, 'bin');
    for (const file of existsSync(bin) ? walk(bin) : []) for (const name of packagesImportedBy(readFileSync(file, 'utf8'))) imported.add(name);
    imported.delete(manifest.name);
    for (const name of Object.keys(pkg.runtime)) imported.add(name);
    const declared = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})]);
    for (const name of imported) if (!declared.has(name)) problems.push(`${pkg.dir}: loads ${name}, which its package.json does not declare`);
    for (const name of declared) if (!imported.has(name)) problems.push(`${pkg.dir}: declares ${name}, which none of its files loads`);
    built.push({ dir: pkg.dir, name: manifest.name, dist });
  }
  if (problems.length > 0) throw new Error(`build-package: the packages do not hold together\n  ${problems.join('\n  ')}`);
  return built;
};

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const { name, dist } of buildPackages()) console.log(`built ${name} into ${relative(root, dist)}`);
}
