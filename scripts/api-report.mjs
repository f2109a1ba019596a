#!/usr/bin/env node
/**
 * The API reports of the package: one per entry point of its `exports` map, written by
 * @microsoft/api-extractor to etc/api/<entry>.api.md and committed, so a change to the public
 * surface shows up in review as a change to these files.
 *
 * Usage:
 *   node scripts/api-report.mjs            regenerates the reports from a fresh declaration build
 *   node scripts/api-report.mjs --check    fails if a report differs from the committed one
 *   --dist                                 uses the declarations in dist/ (after `npm run build`)
 * test/package/api-report.test.ts runs the check.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';
import { build } from './build-package.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const REPORT_FOLDER = join(root, 'etc', 'api');

/** Entry points of the exports map with types: report name and declaration file under dist/. */
export const entryPoints = () => {
  const { exports } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  return Object.entries(exports)
    .filter(([, target]) => typeof target === 'object' && typeof target.types === 'string')
    .map(([subpath, target]) => ({
      name: subpath === '.' ? 'tessera' : subpath.slice(2),
      declarations: target.types.replace(/^\.\/dist\//, ''),
    }));
};

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
        reportFolder: REPORT_FOLDER,
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
    packageJsonFullPath: join(root, 'package.json'),
  });

/**
 * Builds the declarations into a temporary directory and runs api-extractor on every entry point.
 * With `check`, nothing is written and each entry reports whether its committed report is current.
 *
 * @returns one `{ name, succeeded, changed }` per entry point
 */
export const apiReports = ({ check, fromDist = false }) => {
  const scratch = mkdtempSync(join(tmpdir(), 'tessera-api-'));
  mkdirSync(REPORT_FOLDER, { recursive: true });
  try {
    const declarationsRoot = fromDist ? join(root, 'dist') : join(scratch, 'dist');
    if (!fromDist) build({ outDir: declarationsRoot, declarationOnly: true });
    return entryPoints().map((entry) => {
      const result = Extractor.invoke(extractorConfig(declarationsRoot, entry, scratch), { localBuild: !check, showVerboseMessages: false });
      return { name: entry.name, succeeded: result.succeeded, changed: result.apiReportChanged };
    });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
};

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  const results = apiReports({ check, fromDist: process.argv.includes('--dist') });
  const state = (r) => (r.changed ? (check ? 'DIFFERS from etc/api' : 'updated') : r.succeeded ? 'unchanged' : 'FAILED');
  for (const r of results) console.log(`${r.name}: ${state(r)}`);
  if (results.some((r) => !r.succeeded || (check && r.changed))) process.exit(1);
}
