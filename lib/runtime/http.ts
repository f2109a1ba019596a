import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { ErrorBody } from '../contract';

/** A JSON response in API Gateway's payload-format-2.0 shape. */
export const json = (statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyStructuredResultV2 => ({
  statusCode,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

/** The error body every non-2xx tessera answer uses. */
export const errorResponse = (statusCode: number, error: ErrorBody['error'], headers: Record<string, string> = {}): APIGatewayProxyStructuredResultV2 =>
  json(statusCode, { error } satisfies ErrorBody, headers);
