import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/**
 * The local cloud's cache: what it derives once and reuses on every later start (the synthesized
 * template, DynamoDB Local's compiled launcher and class-data archive; docs/local-cloud.md). Each
 * entry is keyed by everything it was derived from, so a stale entry is never used; deleting the
 * directory is always safe and only costs the next start the time to derive them again.
 */

/** Overrides where the cache lives (an absolute path, or relative to the current directory). */
export const LOCAL_CACHE_ENV = 'TESSERA_CACHE_DIR';

/**
 * The project the CLI runs in: the nearest directory at or above `from` with a package.json
 * (`from` itself when there is none).
 *
 * @example
 * projectDirectory('/home/me/app/src') // '/home/me/app'
 */
export const projectDirectory = (from: string = process.cwd()): string => {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return resolve(from);
  }
};

/**
 * The cache directory: `$TESSERA_CACHE_DIR`, else `.tessera/cache` in the project (git-ignored
 * with the rest of `.tessera/`). Not created here.
 *
 * @example
 * localCacheDir() // '/home/me/app/.tessera/cache'
 */
export const localCacheDir = (env: NodeJS.ProcessEnv = process.env): string => {
  const chosen = env[LOCAL_CACHE_ENV];
  return chosen ? resolve(chosen) : join(projectDirectory(), '.tessera', 'cache');
};
