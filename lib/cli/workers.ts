import { WorkerModuleError } from '../workers/errors';
import type { WorkerRegistry } from '../workers/registry';
import { loadWorkerRegistry, PACKAGE_JSON_FIELD, resolveWorkerModule, workerModuleFromPackageJson } from '../workers/worker-module';

/**
 * Which worker module a command runs: `--workers PATH` (relative to the current directory),
 * else the nearest package.json's `"tessera": { "workers": PATH }`. Throws `WorkerModuleError`
 * (one line, exit 1) when neither names one, or the file does not exist.
 *
 * @example
 * workerModulePath(undefined) // '/repo/examples/app/workers.ts', from the repository's package.json
 */
export const workerModulePath = (flag: string | undefined): string => {
  if (flag !== undefined) return resolveWorkerModule(flag);
  const named = workerModuleFromPackageJson();
  if (named === undefined) {
    throw new WorkerModuleError('(none given)', `was not named: pass --workers PATH, or set "${PACKAGE_JSON_FIELD}": { "workers": "PATH" } in package.json`);
  }
  return resolveWorkerModule(named);
};

/**
 * The registry of the worker module a command runs (see {@link workerModulePath}).
 *
 * @example
 * const registry = await cliRegistry(values.get('workers'));
 */
export const cliRegistry = async (flag: string | undefined): Promise<WorkerRegistry> => loadWorkerRegistry(workerModulePath(flag));
