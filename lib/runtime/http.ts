import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { gzipSync } from 'node:zlib';
import { MAX_LISTED_ISSUES, type ErrorBody } from '../contract';

/** A JSON response in API Gateway's payload-format-2.0 shape. */
export const json = (statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyStructuredResultV2 => ({
  statusCode,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

/**
 * The error body every non-2xx tessera answer uses, with at most {@link MAX_LISTED_ISSUES} issues:
 * the rest are counted in `issuesOmitted`, so the size of an answer does not grow with the number
 * of problems a request has.
 *
 * @example
 * errorBody({ code: 'InvalidRunRequest', message: '…', issues: problems }).error.issuesOmitted // problems.length - 100
 */
export const errorBody = (error: ErrorBody['error']): ErrorBody => {
  const { issues } = error;
  if (issues === undefined || issues.length <= MAX_LISTED_ISSUES) return { error };
  return { error: { ...error, issues: issues.slice(0, MAX_LISTED_ISSUES), issuesOmitted: issues.length - MAX_LISTED_ISSUES } };
};

/** An error answer: {@link errorBody} as JSON. */
export const errorResponse = (statusCode: number, error: ErrorBody['error'], headers: Record<string, string> = {}): APIGatewayProxyStructuredResultV2 =>
  json(statusCode, errorBody(error), headers);

/**
 * Lambda's limit on a synchronous response (6 MB), less room for the response envelope and the
 * escaping of the body inside it.
 */
export const RESPONSE_LIMIT_BYTES = 5 * 1024 * 1024;
/** Bodies above this are compressed when the caller accepts gzip. */
export const COMPRESS_ABOVE_BYTES = 256 * 1024;

/**
 * True when an `Accept-Encoding` header allows gzip (`gzip` or `*`, without `q=0`).
 *
 * @example
 * acceptsGzip('gzip, deflate, br') // true
 * acceptsGzip('gzip;q=0, identity') // false
 */
export const acceptsGzip = (header: string | undefined): boolean =>
  (header ?? '').split(',').some((entry) => {
    const [name = '', ...params] = entry.split(';').map((part) => part.trim().toLowerCase());
    const q = params.find((param) => param.startsWith('q='));
    return (name === 'gzip' || name === '*') && (q === undefined || Number(q.slice(2)) > 0);
  });

/**
 * A JSON response that a large body (a run of 100,000 ids) can fit Lambda's response limit in:
 * above {@link COMPRESS_ABOVE_BYTES} the body is gzip-compressed when the caller's
 * `Accept-Encoding` allows it (HTTP clients and browsers send it by default). A body that does
 * not fit either way is answered 406 with a reason instead of failing the invocation.
 *
 * @example
 * return largeJson(200, toRunResource(record), event.headers['accept-encoding'], requestId);
 */
export const largeJson = (statusCode: number, body: unknown, acceptEncoding: string | undefined, requestId: string): APIGatewayProxyStructuredResultV2 => {
  const text = JSON.stringify(body);
  const bytes = Buffer.byteLength(text);
  const gzip = acceptsGzip(acceptEncoding);
  if (bytes > COMPRESS_ABOVE_BYTES && gzip) {
    const packed = gzipSync(text).toString('base64');
    if (packed.length <= RESPONSE_LIMIT_BYTES) {
      return {
        statusCode,
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', vary: 'accept-encoding' },
        body: packed,
        isBase64Encoded: true,
      };
    }
  } else if (bytes <= RESPONSE_LIMIT_BYTES) {
    return json(statusCode, body, bytes > COMPRESS_ABOVE_BYTES ? { vary: 'accept-encoding' } : {});
  }
  return errorResponse(406, {
    code: 'ResponseTooLarge',
    message: `the response is ${bytes} bytes of JSON, over the ${RESPONSE_LIMIT_BYTES}-byte response limit${gzip ? ' even compressed' : '; send Accept-Encoding: gzip'}`,
    requestId,
  });
};
