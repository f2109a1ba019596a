/**
 * The HTTP answers of the run routes: each maps one use case's result (lib/application) to API
 * Gateway's payload-format-2.0 response. Errors a use case throws are mapped in `toHttpError`.
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { CancelRunResult } from '../application/cancel-run';
import type { StartRunResult } from '../application/start-run';
import type { RunResource } from '../contract';
import { errorBody, errorResponse, json, largeJson } from '../runtime/http';
import type { ApiRequest } from './router';

type Answered = Pick<ApiRequest, 'requestId' | 'header'>;

/**
 * `POST /runs`: 202 with the run's location, or 400 naming the first problems and counting the
 * rest (`errorBody`). Each problem quotes at most a short piece of the value it is about, so even
 * the listed ones stay small; the 400 goes through `largeJson` all the same, so no request can
 * make it exceed Lambda's response limit.
 */
export const startedResponse = (result: StartRunResult, request: Answered): APIGatewayProxyStructuredResultV2 => {
  if (result.started) return json(202, result.accepted, { location: result.accepted.location });
  const body = errorBody({
    code: result.code,
    message: result.message,
    ...(result.problems ? { issues: [...result.problems] } : {}),
    requestId: request.requestId,
  });
  return largeJson(400, body, request.header('accept-encoding'), request.requestId);
};

/**
 * `GET /runs/{runId}`: the run, or 404. A run of 100,000 ids is megabytes of JSON: compressed when
 * the caller accepts it (Lambda's response limit is 6 MB).
 */
export const runResponse = (run: RunResource | undefined, request: Answered): APIGatewayProxyStructuredResultV2 =>
  run
    ? largeJson(200, run, request.header('accept-encoding'), request.requestId)
    : errorResponse(404, { code: 'RunNotFound', message: 'no such run', requestId: request.requestId });

/** `POST /runs/{runId}/cancel`: the cancelled run, or 409 when it already ended. */
export const cancelledResponse = (result: CancelRunResult, request: Answered): APIGatewayProxyStructuredResultV2 =>
  result.cancelled
    ? runResponse(result.run, request)
    : errorResponse(409, {
        code: 'RunAlreadyEnded',
        message: `the run already ended ${result.status}; there is nothing to cancel`,
        requestId: request.requestId,
      });

/** `GET /runs`, the conditional, long-polling `GET /runs/{runId}` and `GET /runs/{runId}/subtasks`. */
export { getRunResponse, listRunsResponse, subtasksResponse } from './run-list-responses';
