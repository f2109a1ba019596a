#!/usr/bin/env node
/**
 * The API reports of the published packages (scripts/packages.mjs): one per entry point of each
 * package's `exports` map, written by @microsoft/api-extractor to etc/api/<package>/<entry>.api.md
 * and committed, so a change to the public surface shows up in review as a change to these files.
 * An entry that only re-exports another package (`reexports`) has that package's report; the
 * siblings-only `./internal/*` has none.
 *
 * Usage:
 *   node scripts/api-report.mjs            regenerates the reports from a fresh declaration build
 *   node scripts/api-report.mjs --check    fails if a report differs from the committed one
 * test/package/api-report.test.ts runs the check.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';
import { build } from './build-package.mjs';
import { PACKAGES } from './packages.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const REPORT_FOLDER = join(root, 'etc', 'api');

/**
 * Entry points with types of every package's exports map: the report's folder and name, the
 * declaration file in the one-tree build (dist/ left off), and the package's manifest.
 */
export const entryPoints = () =>
  PACKAGES.flatMap((pkg) => {
    const manifestPath = join(root, 'packages', pkg.dir, 'package.json');
    const { exports } = JSON.parse(readFileSync(manifestPath, 'utf8'));
    return Object.entries(exports)
      .filter(([subpath, target]) => !subpath.includes('*') && typeof target === 'object' && typeof target.types === 'string')
      .map(([subpath, target]) => ({ subpath, declarations: target.types.replace(/^\.\/dist\//, '') }))
      .filter(({ declarations }) => !Object.keys(pkg.reexports).some((entry) => declarations === `${entry}.d.ts`))
      .map(({ subpath, declarations }) => ({
        folder: pkg.dir,
        name: subpath === '.' ? pkg.dir : subpath.slice(2),
        declarations,
        manifestPath,
      }));
  });

const extractorConfig = (declarationsRoot, entry, scratch) =>
  ExtractorConfig.prepare({
    configObject: {
      projectFolder: root,
      mainEntryPointFilePath: join(declarationsRoot, entry.declarations),
      bundledPackages: [],
      compiler: {
        overrideTsconfig: {
          compilerOptions: {
            target: 'ES2022',
            lib: ['ES2023', 'DOM', 'DOM.Iterable'],
            module: 'ESNext',
            moduleResolution: 'Bundler',
            types: ['node'],
            strict: true,
            skipLibCheck: true,
          },
          files: [join(declarationsRoot, entry.declarations)],
        },
      },
      apiReport: {
        enabled: true,
        reportFileName: `${entry.name}.api.md`,
        reportFolder: join(REPORT_FOLDER, entry.folder),
        reportTempFolder: scratch,
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        compilerMessageReporting: { default: { logLevel: 'error' } },
        extractorMessageReporting: {
          default: { logLevel: 'none' },
          // A type the entry point uses but does not export is part of the surface: say so in the report.
          'ae-forgotten-export': { logLevel: 'none', addToApiReportFile: true },
        },
        tsdocMessageReporting: { default: { logLevel: 'none' } },
      },
    },
    configObjectFullPath: join(root, 'api-extractor.json'),
    packageJsonFullPath: entry.manifestPath,
  });

/**
 * Builds the declarations into a temporary directory and runs api-extractor on every entry point.
 * With `check`, nothing is written and each entry reports whether its committed report is current.
 *
 * @returns one `{ name, succeeded, changed }` per entry point
 */
export const apiReports = ({ check }) => {
  const scratch = mkdtempSync(join(tmpdir(), 'tessera-api-'));
  try {
    const declarationsRoot = join(scratch, 'tree');
    build({ outDir: declarationsRoot, declarationOnly: true });
    return entryPoints().map((entry) => {
      mkdirSync(join(REPORT_FOLDER, entry.folder), { recursive: true });
      const result = Extractor.invoke(extractorConfig(declarationsRoot, entry, scratch), { localBuild: !check, showVerboseMessages: false });
      return { name: `${entry.folder}/${entry.name}`, succeeded: result.succeeded, changed: result.apiReportChanged };
    });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
};

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  const results = apiReports({ check });
  const state = (r) => (r.changed ? (check ? 'DIFFERS from etc/api' : 'updated') : r.succeeded ? 'unchanged' : 'FAILED');
  for (const r of results) console.log(`${r.name}: ${state(r)}`);
  if (results.some((r) => !r.succeeded || (check && r.changed))) process.exit(1);
}
