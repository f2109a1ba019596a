/**
 * The HTTP answers of `GET /runs` and `GET /runs/{runId}` (API Gateway payload format 2.0), over
 * the use cases `listRunPage` and `followRun` (lib/application): the handler routes, these map.
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { QueryProblem } from '../application/cursor';
import type { ListRunsResult } from '../application/list-runs';
import { runFormOf, type ListSubtasksResult } from '../application/list-subtasks';
import { gzipTag, type WatchRequest, type WatchResult } from '../application/watch-run';
import { parsePreferWait } from '../contract';
import { errorResponse, json, largeJson } from '../runtime/http';
import type { ApiRequest } from './router';

/** Browsers and proxies may keep a run, but must ask before reusing it. */
const REVALIDATE = { 'cache-control': 'private, no-cache' } as const;

/**
 * `GET /runs`: 200 with a page, or 400 `InvalidQuery` naming each bad parameter.
 *
 * @example
 * 'GET /runs': (request) => listRunsResponse(listRunPage(deps), request),
 */
export const listRunsResponse = async (
  list: (input: { tenantId: string; query: Readonly<Record<string, string | undefined>> }) => Promise<ListRunsResult>,
  request: Pick<ApiRequest, 'event' | 'tenantId' | 'requestId'>,
): Promise<APIGatewayProxyStructuredResultV2> => {
  const result = await list({ tenantId: request.tenantId, query: request.event.queryStringParameters ?? {} });
  return result.ok ? json(200, result.list, REVALIDATE) : invalidQuery(result.problems, request.requestId);
};

/**
 * 400 `InvalidQuery`, naming each bad parameter in `issues`: one answer for every route's query
 * problems, from an unknown parameter (the router) to a bad value (the route).
 *
 * @example
 * invalidQuery([{ path: 'x', code: 'unknown_parameter', message: 'is not a parameter of GET /runs/{runId} (subtasks)' }], requestId)
 */
export const invalidQuery = (problems: readonly QueryProblem[], requestId: string): APIGatewayProxyStructuredResultV2 => {
  const count = problems.length;
  return errorResponse(400, {
    code: 'InvalidQuery',
    message: `the query has ${count} problem${count === 1 ? '' : 's'}: ${problems.map((problem) => `${problem.path} ${problem.message}`).join('; ')}`,
    issues: problems.map((problem) => ({ ...problem })),
    requestId,
  });
};

/**
 * `GET /runs/{runId}/subtasks`: 200 with a page of the run's subtasks, 404 for no such run, or 400
 * `InvalidQuery` naming each bad parameter (a cursor this API did not return for this tenant and run).
 *
 * @example
 * 'GET /runs/{runId}/subtasks': (request) => subtasksResponse(listSubtaskPage(deps), request),
 */
export const subtasksResponse = async (
  list: (input: { tenantId: string; runId: string; query: Readonly<Record<string, string | undefined>> }) => Promise<ListSubtasksResult>,
  request: Pick<ApiRequest, 'event' | 'tenantId' | 'runId' | 'requestId'>,
): Promise<APIGatewayProxyStructuredResultV2> => {
  const { requestId } = request;
  const result = await list({ tenantId: request.tenantId, runId: request.runId, query: request.event.queryStringParameters ?? {} });
  if (result.kind === 'not_found') return errorResponse(404, { code: 'RunNotFound', message: 'no such run', requestId });
  if (result.kind === 'invalid') return invalidQuery(result.problems, requestId);
  return largeJson(200, result.list, request.event.headers['accept-encoding'], requestId);
};

/**
 * `GET /runs/{runId}`: 200 with the run and its `ETag`; 304 without a body when `If-None-Match`
 * still matches (after waiting up to `Prefer: wait=N` seconds for a change, with
 * `Preference-Applied`); 404 for no such run; 400 `InvalidPreference` for a wait out of range,
 * `InvalidQuery` for a `subtasks` other than `page` or `none`.
 *
 * @example
 * 'GET /runs/{runId}': (request) => getRunResponse(followRun(deps), request),
 */
export const getRunResponse = async (
  follow: (request: WatchRequest) => Promise<WatchResult>,
  request: Pick<ApiRequest, 'event' | 'tenantId' | 'runId' | 'requestId'> & Partial<Pick<ApiRequest, 'answerBy'>>,
): Promise<APIGatewayProxyStructuredResultV2> => {
  const { event, tenantId, runId, requestId, answerBy } = request;
  const wait = parsePreferWait(event.headers['prefer']);
  if (typeof wait === 'object') {
    return errorResponse(400, {
      code: 'InvalidPreference',
      message: `Prefer: ${wait.problem}`,
      issues: [{ path: 'Prefer', code: 'invalid_wait', message: wait.problem }],
      requestId,
    });
  }
  const form = runFormOf(event.queryStringParameters ?? {});
  if (typeof form === 'object') return invalidQuery([form], requestId);
  const ifNoneMatch = event.headers['if-none-match'];
  const result = await follow({
    tenantId,
    runId,
    ...(ifNoneMatch === undefined ? {} : { ifNoneMatch }),
    ...(wait === undefined ? {} : { waitSeconds: wait }),
    ...(form === undefined ? {} : { subtasks: form }),
    ...(answerBy === undefined ? {} : { answerBy }),
  });
  // Preference-Applied only when the wait was honoured: it needs a tag to wait against.
  const applied: Record<string, string> = wait !== undefined && ifNoneMatch !== undefined ? { 'preference-applied': `wait=${wait}` } : {};
  if (result.kind === 'not_found') return errorResponse(404, { code: 'RunNotFound', message: 'no such run', requestId });
  if (result.kind === 'not_modified') return { statusCode: 304, headers: { etag: result.etag, ...REVALIDATE, ...applied } };
  // A run of 100,000 ids is megabytes of JSON: compressed when the caller accepts it (Lambda's response limit is 6 MB).
  const response = largeJson(200, result.resource, event.headers['accept-encoding'], requestId);
  if (response.statusCode !== 200) return response;
  const etag = response.headers?.['content-encoding'] === 'gzip' ? gzipTag(result.etag) : result.etag;
  return { ...response, headers: { ...response.headers, etag, ...REVALIDATE, ...applied } };
};
