import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPOSITORY, sourcesUnder, specifiersOf } from '../support/imports';

/**
 * The package knows no worker kind: every kind comes from the user's worker module. So nothing
 * the package ships (the handlers, the constructs, the CLI, the local cloud, the worker SDK)
 * imports the example app; only the example's own CDK app (bin/app.ts), tests and benchmarks do.
 */
const PACKAGE_SOURCES = ['functions', 'lib'];
const EXAMPLE_APP = 'examples';

/** Where a relative specifier of `file` points, relative to the repository. */
const target = (file: string, specifier: string): string => relative(REPOSITORY, resolve(REPOSITORY, dirname(file), specifier));

/** Whether a relative specifier of `file` points into `folder` (of the repository). */
const into = (folder: string, file: string, specifier: string): boolean => {
  if (!specifier.startsWith('.')) return false;
  const path = target(file, specifier);
  return path === folder || path.startsWith(`${folder}/`);
};

const intoExamples = (file: string, specifier: string): boolean => into(EXAMPLE_APP, file, specifier);

/**
 * Analysis code (the price table, the deadline figures, the counting proxy) lives with the
 * benchmarks and scripts that use it, so the package never ships it.
 */
const ANALYSIS = ['bench', 'scripts'];

describe('library boundary', () => {
  it('recognizes an import of the example app from a handler', () => {
    expect(intoExamples('functions/worker.ts', '../examples/app')).toBe(true);
    expect(intoExamples('lib/cli/main.ts', '../../examples/app/workers')).toBe(true);
    expect(intoExamples('lib/cli/main.ts', '../workers')).toBe(false);
    expect(intoExamples('bin/tessera.mjs', '../lib/cli/main.ts')).toBe(false);
  });

  it('functions/, lib/ and the tessera bin import nothing of the example app', () => {
    const files = [...PACKAGE_SOURCES.flatMap(sourcesUnder), 'bin/tessera.mjs'];
    for (const expected of ['functions/worker.ts', 'lib/infra/fan-out.ts', 'lib/cli/main.ts', 'lib/local/tessera-cloud.ts']) expect(files).toContain(expected);
    const imports = files.flatMap((file) => specifiersOf(readFileSync(join(REPOSITORY, file), 'utf8')).map((specifier) => ({ file, specifier })));
    expect(imports.filter(({ file, specifier }) => intoExamples(file, specifier))).toEqual([]);
  });

  it('functions/ and lib/ import nothing of bench/ or scripts/', () => {
    expect(into('bench', 'lib/infra/stack.ts', '../../bench/deadline-figures')).toBe(true);
    const files = PACKAGE_SOURCES.flatMap(sourcesUnder);
    const imports = files.flatMap((file) => specifiersOf(readFileSync(join(REPOSITORY, file), 'utf8')).map((specifier) => ({ file, specifier })));
    expect(imports.filter(({ file, specifier }) => ANALYSIS.some((folder) => into(folder, file, specifier)))).toEqual([]);
    expect(files.filter((file) => /(^|\/)(deadline-figures|request-counter)\.ts$/.test(file))).toEqual([]);
  });

  it('the example CDK app does import it (the check looks where imports are)', () => {
    const specifiers = specifiersOf(readFileSync(join(REPOSITORY, 'bin/app.ts'), 'utf8'));
    expect(specifiers.some((specifier) => intoExamples('bin/app.ts', specifier))).toBe(true);
  });
});
