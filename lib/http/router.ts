import type { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEventV2WithJWTAuthorizer, APIGatewayProxyResultV2 } from 'aws-lambda';
import type { QueryProblem } from '../application/cursor';
import { ROUTE_QUERY_PARAMETERS } from '../contract';
import { RunId } from '../ledger';
import { errorResponse } from '../runtime/http';
import { toHttpError } from '../runtime/http-errors';
import { startInvocation } from '../runtime/lambda';
import { tenantOf } from '../runtime/tenant';
import { actingFor } from '../runtime/tenant-scope';
import { invalidQuery } from './run-list-responses';

/** One request, once the caller's tenant is known. */
export interface ApiRequest {
  readonly event: APIGatewayProxyEventV2WithJWTAuthorizer;
  readonly tenantId: string;
  /** The `{runId}` path parameter, `''` on routes without one. */
  readonly runId: string;
  readonly requestId: string;
  /** The body as text (API Gateway base64-encodes some bodies). */
  readonly body: string;
  /** A request header, by its lower-case name. */
  readonly header: (name: string) => string | undefined;
  /**
   * The instant (epoch ms) the answer must be ready by: the invocation's remaining time less
   * {@link RESPONSE_ROOM_MS}. Infinite when the handler is called without a Lambda context.
   */
  readonly answerBy: number;
}

/** Room an answer leaves before the function's timeout, to serialize, compress and return it. */
export const RESPONSE_ROOM_MS = 2_000;

/** The part of the Lambda context the router reads. */
interface InvocationContext {
  getRemainingTimeInMillis?: () => number;
}

/**
 * The query parameters a route does not take (`ROUTE_QUERY_PARAMETERS`), each as a problem
 * naming it and what the route does take.
 *
 * @example
 * unknownParameters('GET /runs/{runId}', { x: '1' }) // [{ path: 'x', code: 'unknown_parameter', message: 'is not a parameter of GET /runs/{runId} (subtasks)' }]
 */
export const unknownParameters = (routeKey: string, query: Readonly<Record<string, string | undefined>>): QueryProblem[] => {
  const known = Object.hasOwn(ROUTE_QUERY_PARAMETERS, routeKey) ? (ROUTE_QUERY_PARAMETERS[routeKey] ?? []) : [];
  const takes = known.length === 0 ? 'it takes none' : known.join(', ');
  return Object.keys(query)
    .filter((name) => !known.includes(name))
    .map((name) => ({ path: name, code: 'unknown_parameter', message: `is not a parameter of ${routeKey} (${takes})` }));
};

/** A route: one use case, its input read from the request and its result mapped to a response. */
export type Route = (request: ApiRequest) => Promise<APIGatewayProxyResultV2>;

/**
 * The HTTP API over a table of routes keyed by API Gateway's `routeKey` (`'GET /runs/{runId}'`).
 * API Gateway's JWT authorizer has already verified the token; the tenant is one of its claims
 * (see `tenantOf`), and every ledger key starts with it, so another tenant's run is simply not
 * found. A path id no run could have is not found either. A query parameter the route does not
 * take is `400 InvalidQuery` on every route. Errors become answers in `toHttpError`; only a 5xx
 * is logged as an error.
 *
 * @example
 * export const createHandler = (deps: ApiDeps) => routeRequests(deps, { 'GET /runs/{runId}': (request) => … });
 */
export const routeRequests =
  (deps: { readonly tenantClaim: string; readonly logger: Logger }, routes: Readonly<Record<string, Route>>) =>
  async (event: APIGatewayProxyEventV2WithJWTAuthorizer, context?: unknown): Promise<APIGatewayProxyResultV2> => {
    const remaining = (context as InvocationContext | undefined)?.getRemainingTimeInMillis?.();
    const answerBy = remaining === undefined ? Number.POSITIVE_INFINITY : Date.now() + remaining - RESPONSE_ROOM_MS;
    const requestId = event.requestContext.requestId;
    const caller = tenantOf(event, deps.tenantClaim);
    if (!caller.ok) return errorResponse(caller.statusCode, { code: caller.code, message: caller.message, requestId });
    const runId = event.pathParameters?.runId ?? '';
    startInvocation(deps.logger, { tenantId: caller.tenantId, requestId, route: event.routeKey, ...(runId ? { runId } : {}) });
    // A path id no run could have (empty, too long, not well-formed Unicode) is simply not found, like any unknown id.
    if (event.pathParameters?.runId !== undefined && !RunId.safeParse(runId).success) {
      return errorResponse(404, { code: 'RunNotFound', message: 'no such run', requestId });
    }
    const route = Object.hasOwn(routes, event.routeKey) ? routes[event.routeKey] : undefined;
    if (!route) return errorResponse(404, { code: 'RouteNotFound', message: `no route ${event.routeKey}`, requestId });
    // Every route refuses a parameter it does not take the same way, before its use case runs.
    const unknown = unknownParameters(event.routeKey, event.queryStringParameters ?? {});
    if (unknown.length > 0) return invalidQuery(unknown, requestId);
    const body = event.isBase64Encoded ? Buffer.from(event.body ?? '', 'base64').toString('utf8') : (event.body ?? '');
    try {
      // Every ledger call of the route acts for the caller's tenant: on AWS, with credentials IAM
      // restricts to that tenant's keys (lib/runtime/ledger-credentials.ts).
      const request = { event, tenantId: caller.tenantId, runId, requestId, body, header: (name: string) => event.headers[name], answerBy };
      return await actingFor(caller.tenantId, () => route(request));
    } catch (error) {
      const response = toHttpError(error, requestId);
      const fields = { errorName: (error as Error).name, errorMessage: (error as Error).message, statusCode: response.statusCode };
      // A refused request (404, 409) is the API working; only a 5xx is an error worth alerting on.
      if ((response.statusCode ?? 500) >= 500) deps.logger.error('request failed', fields);
      else deps.logger.info('request refused', fields);
      return response;
    }
  };
