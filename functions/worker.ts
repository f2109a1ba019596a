import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { WorkerDeps } from '../lib/application/deps';
import { runDeliveries } from '../lib/application/run-delivery';
import { executionsFor, ledgerAccessFromEnv, ledgerFor, redeliveryFor } from '../lib/runtime/aws';
import { parseConfig } from '../lib/runtime/config';
import { FUNCTION_CONFIG } from '../lib/runtime/environment';
import { createLogger, createMetrics, onColdStart } from '../lib/runtime/lambda';
import { createModelProvider, parseModelConfig, type WorkerRegistry } from '../lib/workers';

/** What the function needs, from its environment and the deployment's worker registry. */
export const depsFromEnv = (env: Readonly<Record<string, string | undefined>>, registry: WorkerRegistry): WorkerDeps => {
  const config = parseConfig(FUNCTION_CONFIG.worker, env);
  return {
    now: Date.now,
    ledger: ledgerFor(config.TABLE_NAME, {
      access: ledgerAccessFromEnv(env),
      dailyAllowance: { modelCalls: config.TENANT_DAILY_MODEL_CALLS, costLimit: config.TENANT_DAILY_COST_LIMIT },
    }),
    executions: executionsFor(),
    redelivery: redeliveryFor(),
    registry,
    models: createModelProvider({ config: parseModelConfig(env) }),
    leaseMs: config.LEASE_SECONDS * 1000,
    maxReceiveCount: config.MAX_RECEIVE_COUNT,
    logger: createLogger('worker', env),
    metrics: createMetrics(env),
  };
};

/** Worker: runs each delivery of the batch on its own and reports only the ones to deliver again. */
export const createHandler = (deps: WorkerDeps) => {
  const run = runDeliveries(deps);
  return async (event: SQSEvent, context?: unknown): Promise<SQSBatchResponse> =>
    run(event, (context as { awsRequestId?: string } | undefined)?.awsRequestId ?? 'local');
};

/** The Lambda handler over a worker registry: the construct's entry exports `handlerFor(registry)` as `handler`. */
export const handlerFor = (registry: WorkerRegistry) => onColdStart(() => createHandler(depsFromEnv(process.env, registry)));
