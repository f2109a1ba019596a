import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, from this file's own location. */
export const REPOSITORY = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Source files below `folder` (relative to the repository), as relative paths.
 *
 * @example
 * sourcesUnder('lib/domain') // ['lib/domain/calendar-split.ts', …]
 */
export const sourcesUnder = (folder: string): string[] =>
  readdirSync(join(REPOSITORY, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourcesUnder(path);
    return /\.(ts|mts|cts|js|mjs)$/.test(entry.name) ? [path] : [];
  });

const SPECIFIER =
  /(?:^|[^.\w])(?:import|export)\s[^'";]*?from\s*['"]([^'"]+)['"]|(?:^|[^.\w])import\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|require\s*\(\s*['"]([^'"]+)['"]\s*\)/g;

/**
 * Every module specifier a source file imports or re-exports, statically or dynamically.
 *
 * @example
 * specifiersOf("import { z } from 'zod';\nconst fs = await import('node:fs');") // ['zod', 'node:fs']
 */
export const specifiersOf = (source: string): string[] => [...source.matchAll(SPECIFIER)].map((m) => m[1] ?? m[2] ?? m[3] ?? m[4] ?? '');
