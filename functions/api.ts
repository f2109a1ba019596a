import { cancelRun, deployedCatalog, followRun, listRunPage, listSubtaskPage, startRun, type ApiDeps } from '../lib/application/runs';
import { executionsFor, ledgerAccessFromEnv, ledgerFor } from '../lib/runtime/aws';
import { parseConfig } from '../lib/runtime/config';
import { FUNCTION_CONFIG } from '../lib/runtime/environment';
import { routeRequestsWithMcp } from '../lib/http/mcp-route';
import { cancelledResponse, getRunResponse, listRunsResponse, startedResponse, subtasksResponse } from '../lib/http/run-responses';
import { createLogger, onColdStart } from '../lib/runtime/lambda';
import type { WorkerRegistry } from '../lib/workers';
import { allowedModelIds, parseModelConfig } from '../lib/workers/models/config';

/** What the function needs, from its environment and the deployment's worker registry. */
export const depsFromEnv = (env: Readonly<Record<string, string | undefined>>, registry: WorkerRegistry): ApiDeps => {
  const config = parseConfig(FUNCTION_CONFIG.api, env);
  return {
    ledger: ledgerFor(config.TABLE_NAME, { access: ledgerAccessFromEnv(env) }),
    executions: executionsFor(config.STATE_MACHINE_ARN),
    catalog: deployedCatalog(registry.catalog(), config.WORKER_KINDS, allowedModelIds(parseModelConfig(env))),
    maxDeadlineSeconds: config.MAX_DEADLINE_SECONDS,
    capacity: config.WORKER_CAPACITY,
    tenantClaim: config.TENANT_CLAIM,
    newRunId: () => crypto.randomUUID(),
    logger: createLogger('api', env),
  };
};

/** The HTTP API: one use case per route, the tenant from the JWT claim (see `routeRequests`), and MCP at /mcp over them. */
export const createHandler = (deps: ApiDeps) => {
  const [start, list, follow, cancel, subtasks] = [startRun(deps), listRunPage(deps), followRun(deps), cancelRun(deps), listSubtaskPage(deps)];
  return routeRequestsWithMcp(deps, {
    'POST /runs': async (request) => startedResponse(await start({ ...request, idempotencyKey: request.header('idempotency-key') }), request),
    'GET /runs': (request) => listRunsResponse(list, request),
    'GET /runs/{runId}': (request) => getRunResponse(follow, request),
    'GET /runs/{runId}/subtasks': (request) => subtasksResponse(subtasks, request),
    'POST /runs/{runId}/cancel': async (request) => cancelledResponse(await cancel(request), request),
  });
};

/** The Lambda handler over a worker registry: the construct's entry exports `handlerFor(registry)` as `handler`. */
export const handlerFor = (registry: WorkerRegistry) => onColdStart(() => createHandler(depsFromEnv(process.env, registry)));
