import type { DispatchDeps } from '../lib/application/deps';
import { dispatchRound, RoundRef } from '../lib/application/dispatch-round';
import { ledgerAccessFromEnv, ledgerFor, queueFor } from '../lib/runtime/aws';
import { parseConfig, parseInput } from '../lib/runtime/config';
import { FUNCTION_CONFIG } from '../lib/runtime/environment';
import { createLogger, onColdStart } from '../lib/runtime/lambda';
import { actingFor } from '../lib/runtime/tenant-scope';
import type { WorkerRegistry } from '../lib/workers';

/**
 * What the function needs, from its environment. Every handler is built as `depsFromEnv(env,
 * registry)`; Dispatch plans nothing since each round is stored as planned, so it reads no kind.
 */
export const depsFromEnv = (env: Readonly<Record<string, string | undefined>>, _registry: WorkerRegistry): DispatchDeps => {
  const config = parseConfig(FUNCTION_CONFIG.dispatch, env);
  return {
    ledger: ledgerFor(config.TABLE_NAME, { access: ledgerAccessFromEnv(env) }),
    queue: queueFor(config.QUEUE_URLS),
    batchSubtasks: config.BATCH_SUBTASKS,
    now: Date.now,
    logger: createLogger('dispatch', env),
  };
};

/** Dispatch: the round as it was stored (round 1: the api's plan, appended), written as batches and enqueued; returns the batches. */
export const createHandler = (deps: DispatchDeps) => {
  const dispatch = dispatchRound(deps);
  return async (event: unknown) => {
    const round = parseInput('Dispatch', RoundRef, event);
    return actingFor(round.tenantId, () => dispatch(round));
  };
};

/** The Lambda handler over a worker registry: the construct's entry exports `handlerFor(registry)` as `handler`. */
export const handlerFor = (registry: WorkerRegistry) => onColdStart(() => createHandler(depsFromEnv(process.env, registry)));
