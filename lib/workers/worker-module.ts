import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
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

/**
 * The registry a loaded worker module exports: its `registry` export, else its default export.
 * Throws `WorkerModuleError` naming `path` when it has neither.
 *
 * @example
 * const registry = registryOfModule(await import('./src/workers.ts'), 'src/workers.ts');
 */
export const registryOfModule = (module: unknown, path: string): WorkerRegistry => {
  const exports = (typeof module === 'object' && module !== null ? module : {}) as Record<string, unknown>;
  const registry = exports.registry ?? exports.default;
  if (!isRegistry(registry)) throw new WorkerModuleError(path, WORKER_MODULE_EXPORT_HINT);
  return registry;
};

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
