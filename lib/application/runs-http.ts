/**
 * The HTTP answers of `GET /runs` and `GET /runs/{runId}` (API Gateway payload format 2.0), over
 * the use cases in list-runs.ts and watch-run.ts: the handler routes, these map.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { parsePreferWait } from '../contract';
import type { Ledger } from '../ledger';
import { errorResponse, json, largeJson } from '../runtime/http';
import { listRuns } from './list-runs';
import { gzipTag, watchRun, type WatchOptions } from './watch-run';

/** Browsers and proxies may keep a run, but must ask before reusing it. */
const REVALIDATE = { 'cache-control': 'private, no-cache' } as const;

/**
 * `GET /runs`: 200 with a page, or 400 `InvalidQuery` naming each bad parameter.
 *
 * @example
 * case 'GET /runs': return await listRunsResponse(deps.ledger, event, tenant, requestId);
 */
export const listRunsResponse = async (ledger: Ledger, event: Pick<APIGatewayProxyEventV2, 'queryStringParameters'>, tenantId: string, requestId: string): Promise<APIGatewayProxyStructuredResultV2> => {
  const result = await listRuns(ledger, tenantId, event.queryStringParameters ?? {});
  if (result.ok) return json(200, result.list, REVALIDATE);
  const count = result.problems.length;
  return errorResponse(400, {
    code: 'InvalidQuery',
    message: `the query has ${count} problem${count === 1 ? '' : 's'}: ${result.problems.map((problem) => `${problem.path} ${problem.message}`).join('; ')}`,
    issues: result.problems.map((problem) => ({ ...problem })),
    requestId,
  });
};

/**
 * `GET /runs/{runId}`: 200 with the run and its `ETag`; 304 without a body when `If-None-Match`
 * still matches (after waiting up to `Prefer: wait=N` seconds for a change, with
 * `Preference-Applied`); 404 for no such run; 400 `InvalidPreference` for a wait out of range.
 *
 * @example
 * case 'GET /runs/{runId}': return await getRunResponse(deps.ledger, event, tenant, runId, requestId);
 */
export const getRunResponse = async (
  ledger: Ledger,
  event: Pick<APIGatewayProxyEventV2, 'headers'>,
  tenantId: string,
  runId: string,
  requestId: string,
  options: WatchOptions = {},
): Promise<APIGatewayProxyStructuredResultV2> => {
  const wait = parsePreferWait(event.headers['prefer']);
  if (typeof wait === 'object') {
    return errorResponse(400, { code: 'InvalidPreference', message: `Prefer: ${wait.problem}`, issues: [{ path: 'Prefer', code: 'invalid_wait', message: wait.problem }], requestId });
  }
  const ifNoneMatch = event.headers['if-none-match'];
  const result = await watchRun(ledger, { tenantId, runId, ...(ifNoneMatch === undefined ? {} : { ifNoneMatch }), ...(wait === undefined ? {} : { waitSeconds: wait }) }, options);
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
