import type { APIGatewayProxyEventV2WithJWTAuthorizer, APIGatewayProxyResultV2 } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { getRunResponse, listRunsResponse } from '../lib/application/runs-http';
import { IdempotencyKey, type RunAccepted } from '../lib/contract';
import { validateRunRequest, withModels, type WorkerCatalog } from '../lib/domain';
import { RunId, toRunResource, type Ledger } from '../lib/ledger';
import type { RunExecutions } from '../lib/orchestration/run-execution';
import { executionsFor, ledgerFor } from '../lib/runtime/aws';
import { intVariable, jsonVariable, parseConfig } from '../lib/runtime/config';
import { errorResponse, json, largeJson } from '../lib/runtime/http';
import { toHttpError } from '../lib/runtime/http-errors';
import { createLogger, onColdStart } from '../lib/runtime/lambda';
import { tenantOf } from '../lib/runtime/tenant';
import type { WorkerRegistry } from '../lib/workers';
import { allowedModelIds, parseModelConfig } from '../lib/workers/models/config';

const Config = z.object({
  TABLE_NAME: z.string().min(1),
  STATE_MACHINE_ARN: z.string().min(1),
  MAX_DEADLINE_SECONDS: intVariable(900),
  TENANT_CLAIM: z.string().min(1).default('custom:tenant'),
  /** The kinds this deployment has queues for; a plan may use only these. */
  WORKER_KINDS: jsonVariable(z.array(z.string())),
});

export interface ApiDeps {
  readonly ledger: Ledger;
  readonly executions: RunExecutions;
  readonly catalog: WorkerCatalog;
  readonly maxDeadlineSeconds: number;
  readonly tenantClaim: string;
  readonly newRunId: () => string;
  readonly logger: ReturnType<typeof createLogger>;
}

/** The registry's catalog, narrowed to the kinds deployed with a queue and the models the workers allow. */
const deployedCatalog = (catalog: WorkerCatalog, deployed: readonly string[], models: readonly string[]): WorkerCatalog =>
  withModels(
    {
      get: (kind) => (deployed.includes(kind) ? catalog.get(kind) : undefined),
      kinds: () => catalog.kinds().filter((kind) => deployed.includes(kind)),
    },
    models,
  );

/** What the function needs, from its environment and the deployment's worker registry. */
export const depsFromEnv = (env: Readonly<Record<string, string | undefined>>, registry: WorkerRegistry): ApiDeps => {
  const config = parseConfig(Config, env);
  return {
    ledger: ledgerFor(config.TABLE_NAME),
    executions: executionsFor(config.STATE_MACHINE_ARN),
    catalog: deployedCatalog(registry.catalog(), config.WORKER_KINDS, allowedModelIds(parseModelConfig(env))),
    maxDeadlineSeconds: config.MAX_DEADLINE_SECONDS,
    tenantClaim: config.TENANT_CLAIM,
    newRunId: randomUUID,
    logger: createLogger('api', env),
  };
};

type Event = APIGatewayProxyEventV2WithJWTAuthorizer;

const readJson = (event: Event): { ok: true; value: unknown } | { ok: false } => {
  try {
    const text = event.isBase64Encoded ? Buffer.from(event.body ?? '', 'base64').toString('utf8') : (event.body ?? '');
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
};

/** POST /runs: validate and plan (400, nothing written), record idempotently, start the execution named after the run. */
const createRun = async (deps: ApiDeps, event: Event, tenantId: string, requestId: string): Promise<APIGatewayProxyResultV2> => {
  const body = readJson(event);
  if (!body.ok) return errorResponse(400, { code: 'InvalidJson', message: 'the request body is not valid JSON', requestId });
  const key = event.headers['idempotency-key'];
  if (key !== undefined && !IdempotencyKey.safeParse(key).success) {
    return errorResponse(400, { code: 'InvalidIdempotencyKey', message: 'Idempotency-Key must be 1-255 printable ASCII characters without spaces', requestId });
  }
  const validation = validateRunRequest(body.value, deps.catalog, { maxDeadlineSeconds: deps.maxDeadlineSeconds });
  if (!validation.ok) {
    const count = validation.problems.length;
    return errorResponse(400, { code: 'InvalidRunRequest', message: `the run request has ${count} problem${count === 1 ? '' : 's'}`, issues: validation.problems, requestId });
  }
  const { run, created } = await deps.ledger.createRun({ tenantId, runId: deps.newRunId(), request: validation.request, ...(key ? { idempotencyKey: key } : {}) });
  // Also on a replay: it heals a crash between recording the run and starting it.
  await deps.executions.start({ runId: run.runId, tenantId });
  deps.logger.info('run accepted', { runId: run.runId, replay: !created, subtasks: validation.subtasks.length });
  const location = `/runs/${run.runId}`;
  return json(202, { runId: run.runId, status: run.status, location } satisfies RunAccepted, { location });
};

const getRun = async (deps: ApiDeps, tenantId: string, runId: string, requestId: string, acceptEncoding?: string): Promise<APIGatewayProxyResultV2> => {
  const record = await deps.ledger.getRun(tenantId, runId);
  // A run of 100,000 ids is megabytes of JSON: compressed when the caller accepts it (Lambda's response limit is 6 MB).
  return record ? largeJson(200, toRunResource(record), acceptEncoding, requestId) : errorResponse(404, { code: 'RunNotFound', message: 'no such run', requestId });
};

/** POST /runs/{runId}/cancel: finished outcomes stay; the rest become `cancelled`; waiting Map iterations are released. */
const cancelRun = async (deps: ApiDeps, tenantId: string, runId: string, requestId: string, acceptEncoding?: string): Promise<APIGatewayProxyResultV2> => {
  const closed = await deps.ledger.cancelRun(tenantId, runId);
  if (closed.status !== 'cancelled') {
    return errorResponse(409, { code: 'RunAlreadyEnded', message: `the run already ended ${closed.status}; there is nothing to cancel`, requestId });
  }
  await Promise.all(closed.taskTokens.map((token) => deps.executions.release(token, { cancelled: true })));
  deps.logger.info('run cancelled', { runId, closed: closed.cancelledSubtaskIds.length });
  return getRun(deps, tenantId, runId, requestId, acceptEncoding);
};

/**
 * The HTTP API. API Gateway's JWT authorizer has already verified the token; the tenant is one of
 * its claims (a string that follows the tenant rule, see `tenantOf`), and every ledger key starts
 * with it, so another tenant's run is simply not found.
 */
export const createHandler = (deps: ApiDeps) => async (event: Event): Promise<APIGatewayProxyResultV2> => {
  const requestId = event.requestContext.requestId;
  const caller = tenantOf(event, deps.tenantClaim);
  if (!caller.ok) return errorResponse(caller.statusCode, { code: caller.code, message: caller.message, requestId });
  const tenant = caller.tenantId;
  const runId = event.pathParameters?.runId ?? '';
  // Keys of an earlier invocation on this warm instance must not leak into this one's lines.
  deps.logger.resetKeys();
  deps.logger.appendKeys({ tenantId: tenant, requestId, route: event.routeKey, ...(runId ? { runId } : {}) });
  // A path id no run could have (empty, too long, not well-formed Unicode) is simply not found, like any unknown id.
  if (event.pathParameters?.runId !== undefined && !RunId.safeParse(runId).success) {
    return errorResponse(404, { code: 'RunNotFound', message: 'no such run', requestId });
  }
  try {
    switch (event.routeKey) {
      case 'POST /runs':
        return await createRun(deps, event, tenant, requestId);
      case 'GET /runs':
        return await listRunsResponse(deps.ledger, event, tenant, requestId);
      case 'GET /runs/{runId}':
        return await getRunResponse(deps.ledger, event, tenant, runId, requestId);
      case 'POST /runs/{runId}/cancel':
        return await cancelRun(deps, tenant, runId, requestId, event.headers['accept-encoding']);
      default:
        return errorResponse(404, { code: 'RouteNotFound', message: `no route ${event.routeKey}`, requestId });
    }
  } catch (error) {
    const response = toHttpError(error, requestId);
    const fields = { errorName: (error as Error).name, errorMessage: (error as Error).message, statusCode: response.statusCode };
    // A refused request (404, 409) is the API working; only a 5xx is an error worth alerting on.
    if ((response.statusCode ?? 500) >= 500) deps.logger.error('request failed', fields);
    else deps.logger.info('request refused', fields);
    return response;
  }
};

/**
 * The Lambda handler over a worker registry. The construct bundles a one-line entry per function
 * that imports the deployment's worker module and exports `handlerFor(registry)` as `handler`.
 *
 * @example
 * export const handler = handlerFor(registry);
 */
export const handlerFor = (registry: WorkerRegistry) => onColdStart(() => createHandler(depsFromEnv(process.env, registry)));
