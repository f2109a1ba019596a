import { reconcileRun, ReconcileEvent } from '../lib/application/close-run';
import type { ReconcileDeps } from '../lib/application/deps';
import { ledgerFor } from '../lib/runtime/aws';
import { parseConfig, parseInput } from '../lib/runtime/config';
import { FUNCTION_CONFIG } from '../lib/runtime/environment';
import { createLogger, createMetrics, onColdStart } from '../lib/runtime/lambda';
import { createModelProvider, parseModelConfig, type WorkerRegistry } from '../lib/workers';

/** What the function needs, from its environment and the deployment's worker registry. */
export const depsFromEnv = (env: Readonly<Record<string, string | undefined>>, registry: WorkerRegistry): ReconcileDeps => {
  const config = parseConfig(FUNCTION_CONFIG.reconcile, env);
  return {
    ledger: ledgerFor(config.TABLE_NAME),
    now: Date.now,
    registry,
    // A requested synthesis calls the model through the workers' adapters, under the same settings.
    models: createModelProvider({ config: parseModelConfig(env) }),
    sources: registry.sources(),
    logger: createLogger('reconcile', env),
    metrics: createMetrics(env),
  };
};

/** Reconcile: the next round, or the run's end with its answer; also closes the run of an execution that ended unfinished. */
export const createHandler = (deps: ReconcileDeps) => {
  const reconcile = reconcileRun(deps);
  return async (event: unknown) => reconcile(parseInput('Reconcile', ReconcileEvent, event));
};

/**
 * The Lambda handler over a worker registry. The construct bundles a one-line entry per function
 * that imports the deployment's worker module and exports `handlerFor(registry)` as `handler`.
 *
 * @example
 * export const handler = handlerFor(registry);
 */
export const handlerFor = (registry: WorkerRegistry) => onColdStart(() => createHandler(depsFromEnv(process.env, registry)));
