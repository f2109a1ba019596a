import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { IdempotencyConflict, RequestTooLarge, RunNotFound } from '../ledger';
import { ExecutionStartFailed } from '../orchestration/errors';
import { errorResponse } from './http';

/**
 * The one place errors become HTTP answers. Known errors keep their precise code; anything else
 * is a generic 500 that carries the request id and nothing of the error itself.
 *
 * @example
 * catch (error) { return toHttpError(error, event.requestContext.requestId); }
 */
export const toHttpError = (error: unknown, requestId: string): APIGatewayProxyStructuredResultV2 => {
  if (error instanceof RunNotFound) return errorResponse(404, { code: 'RunNotFound', message: 'no such run', requestId });
  if (error instanceof IdempotencyConflict) {
    return errorResponse(409, {
      code: 'IdempotencyConflict',
      message: 'this Idempotency-Key was already used with a different request body; use a new key for a new run',
      requestId,
    });
  }
  if (error instanceof RequestTooLarge) {
    // Refused before anything was written: the ledger checks the size first.
    return errorResponse(413, {
      code: 'RequestTooLarge',
      message: `the run request is ${error.bytes} bytes as JSON; at most ${error.limit} are accepted`,
      issues: [
        {
          path: error.field,
          code: 'too_large',
          message: `${error.field} is ${error.fieldBytes} bytes as JSON; the whole request may be at most ${error.limit}`,
        },
      ],
      requestId,
    });
  }
  if (error instanceof ExecutionStartFailed) {
    return errorResponse(
      503,
      { code: 'ExecutionNotStarted', message: 'the run was recorded but could not be started; retry with the same Idempotency-Key', requestId },
      { 'retry-after': '2' },
    );
  }
  return errorResponse(500, { code: 'InternalError', message: 'internal error', requestId });
};
