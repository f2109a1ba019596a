import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { WorkerModuleError } from './errors';
import type { WorkerRegistry } from './registry';

/*
 * A product team's worker module: a module exporting `registry` (a default export is accepted
 * too) made with `createRegistry([...])`. The CDK construct bundles it into every function that
 * runs worker kinds, and the CLI and the local cloud import it; all of them read it through here.
 */

/** What a worker module is told to export when it exports no registry. */
export const WORKER_MODULE_EXPORT_HINT = "must export its registry: export const registry = createRegistry([...]) (from '@tessera-fanout/tessera/workers')";

const isRegistry = (value: unknown): value is WorkerRegistry =>
  typeof value === 'object' &&
  value !== null &&
  ['get', 'find', 'kinds', 'catalog', 'sources', 'merge'].every((method) => typeof (value as Record<string, unknown>)[method] === 'function');

/** The export of a worker module that holds its registry. */
export type RegistryExport = 'registry' | 'default';

/**
 * Which export of a loaded worker module holds its registry: `registry`, else the default export.
 * Throws `WorkerModuleError` naming `path` when neither is a registry.
 *
 * @example
 * registryExportOf(await import(pathToFileURL(path).href), 'src/workers.ts') // 'registry'
 */
export const registryExportOf = (module: unknown, path: string): RegistryExport => {
  const exports = (typeof module === 'object' && module !== null ? module : {}) as Record<string, unknown>;
  if (isRegistry(exports.registry)) return 'registry';
  if (isRegistry(exports.default)) return 'default';
  throw new WorkerModuleError(path, WORKER_MODULE_EXPORT_HINT);
};

/**
 * The registry a loaded worker module exports (see {@link registryExportOf}).
 *
 * @example
 * const registry = registryOfModule(await import(pathToFileURL(path).href), 'src/workers.ts');
 */
export const registryOfModule = (module: unknown, path: string): WorkerRegistry =>
  (module as Record<RegistryExport, WorkerRegistry>)[registryExportOf(module, path)];

/**
 * The absolute path of a worker module: relative paths are resolved against `from` (the current
 * directory by default, as NodejsFunction's `entry` is). Throws `WorkerModuleError` when there is
 * no such file.
 *
 * @example
 * resolveWorkerModule('src/workers.ts') // '/home/me/app/src/workers.ts'
 */
export const resolveWorkerModule = (path: string, from: string = process.cwd()): string => {
  const absolute = isAbsolute(path) ? path : resolve(from, path);
  if (!existsSync(absolute)) throw new WorkerModuleError(path, 'does not exist');
  return absolute;
};

/**
 * Imports a worker module and returns its registry. A `.ts` module needs a TypeScript-aware
 * loader in the process (the `tessera` CLI and vitest have one).
 *
 * @example
 * const registry = await loadWorkerRegistry('examples/app/workers.ts');
 */
export const loadWorkerRegistry = async (path: string, from?: string): Promise<WorkerRegistry> => {
  const absolute = resolveWorkerModule(path, from);
  let module: unknown;
  try {
    module = await import(pathToFileURL(absolute).href);
  } catch (error) {
    throw new WorkerModuleError(path, `failed to load: ${(error as Error).message}`, { cause: error });
  }
  return registryOfModule(module, path);
};

/** The `package.json` field naming a project's worker module: `"tessera": { "workers": "src/workers.ts" }`. */
export const PACKAGE_JSON_FIELD = 'tessera';

/**
 * The worker module the nearest `package.json` at or above `from` names in its
 * `"tessera": { "workers": PATH }` field, as an absolute path; `undefined` when the nearest
 * `package.json` has no such field, or there is none.
 *
 * @example
 * workerModuleFromPackageJson('/home/me/app/src') // '/home/me/app/src/workers.ts'
 */
export const workerModuleFromPackageJson = (from: string = process.cwd()): string | undefined => {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      let manifest: unknown;
      try {
        manifest = JSON.parse(readFileSync(file, 'utf8'));
      } catch (error) {
        throw new WorkerModuleError(file, `cannot be read as JSON: ${(error as Error).message}`, { cause: error });
      }
      const field = (manifest as Record<string, unknown> | null)?.[PACKAGE_JSON_FIELD];
      const workers = typeof field === 'object' && field !== null ? (field as Record<string, unknown>).workers : undefined;
      if (workers === undefined) return undefined;
      if (typeof workers !== 'string' || workers === '') throw new WorkerModuleError(file, `field "${PACKAGE_JSON_FIELD}.workers" must be a module path`);
      return resolve(dir, workers);
    }
    if (dirname(dir) === dir) return undefined;
  }
};
