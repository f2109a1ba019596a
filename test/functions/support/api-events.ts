/** API Gateway's events for the api handler, as its HTTP API and JWT authorizer deliver them, and its answers parsed. */
import type { APIGatewayProxyEventV2WithJWTAuthorizer, APIGatewayProxyResultV2 } from 'aws-lambda';
import { z } from 'zod';
import { ErrorBody, RunAccepted, type RunRequestInput } from '../../../lib/contract';
import { uniqueName } from '../../support/aws';
import { T0, type Pipeline } from './pipeline';
import { staggeredDeadlineRequest } from './requests';

/** How a test calls the API: route, caller and request. */
export interface ApiCall {
  /** The route as declared, `METHOD /path`: `POST /runs`, `GET /runs/{runId}`, `POST /runs/{runId}/cancel`. */
  readonly routeKey: string;
  /** The `custom:tenant` claim as the authorizer delivers it (a string); `null` for a token without it. */
  readonly tenant: string | null;
  /** The claim's JSON value in the token itself, when it is not `tenant` (API Gateway turns `123` into `"123"`). */
  readonly tokenTenant?: unknown;
  readonly runId?: string;
  readonly body?: string;
  readonly idempotencyKey?: string;
  /** The query string's parameters, as API Gateway passes them (`queryStringParameters`). */
  readonly query?: Readonly<Record<string, string>>;
  /** More request headers, by lower-case name (`if-none-match`, `prefer`). */
  readonly headers?: Readonly<Record<string, string>>;
}

let requestCounter = 0;

const base64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * A JWT whose payload is `claims`. Unsigned: the handler runs behind API Gateway's authorizer,
 * which verified the signature; the handler reads the token only for its claims' JSON types.
 */
export const tokenWith = (claims: Record<string, unknown>): string => `${base64url({ alg: 'RS256', typ: 'JWT' })}.${base64url(claims)}.c2lnbmF0dXJl`;

/**
 * The payload-format-2.0 event API Gateway's HTTP API sends after its JWT authorizer accepted the
 * token: the token in the authorization header, its claims as strings, header names lower-cased,
 * path parameters from the route.
 *
 * @example
 * apiEvent({ routeKey: 'GET /runs/{runId}', tenant: 'acme', runId }).pathParameters; // { runId }
 */
export const apiEvent = (call: ApiCall): APIGatewayProxyEventV2WithJWTAuthorizer => {
  const [method = 'GET', route = '/'] = call.routeKey.split(' ');
  const path = call.runId === undefined ? route : route.replace('{runId}', call.runId);
  requestCounter += 1;
  const requestId = `req-${requestCounter}`;
  const claims: Record<string, string> = { sub: 'user-1', iss: 'https://issuer.example', ...(call.tenant === null ? {} : { 'custom:tenant': call.tenant }) };
  const tokenTenant = 'tokenTenant' in call ? call.tokenTenant : (call.tenant ?? undefined);
  const token = tokenWith({ sub: 'user-1', iss: 'https://issuer.example', ...(tokenTenant === undefined ? {} : { 'custom:tenant': tokenTenant }) });
  return {
    version: '2.0',
    routeKey: call.routeKey,
    rawPath: path,
    rawQueryString: new URLSearchParams(call.query ?? {}).toString(),
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      host: 'api.example',
      ...(call.idempotencyKey === undefined ? {} : { 'idempotency-key': call.idempotencyKey }),
      ...call.headers,
    },
    requestContext: {
      accountId: '123456789012',
      apiId: 'api1',
      authorizer: { principalId: '', integrationLatency: 0, jwt: { claims, scopes: null } },
      domainName: 'api.example',
      domainPrefix: 'api',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'vitest' },
      requestId,
      routeKey: call.routeKey,
      stage: '$default',
      time: '01/Jun/2040:12:00:00 +0000',
      timeEpoch: Date.parse(T0),
    },
    ...(call.runId === undefined ? {} : { pathParameters: { runId: call.runId } }),
    ...(call.query === undefined ? {} : { queryStringParameters: { ...call.query } }),
    ...(call.body === undefined ? {} : { body: call.body }),
    isBase64Encoded: false,
  };
};

const StructuredResult = z.object({ statusCode: z.number(), headers: z.record(z.string(), z.string()).optional(), body: z.string() });

/** A handler's answer with its JSON body parsed (still `unknown`: tests parse it with contract schemas). */
export interface ApiAnswer {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  readonly body: unknown;
}

export const answerOf = (result: APIGatewayProxyResultV2): ApiAnswer => {
  const structured = StructuredResult.parse(result);
  const body: unknown = JSON.parse(structured.body);
  return { statusCode: structured.statusCode, headers: structured.headers ?? {}, body };
};

/** The `error` of an error answer. */
export const errorOf = (answer: ApiAnswer) => ErrorBody.parse(answer.body).error;

/** Calls the API handler and parses its answer. */
export const callApi = async (p: Pipeline, call: ApiCall): Promise<ApiAnswer> => answerOf(await p.api(apiEvent(call)));

/**
 * `POST /runs` that must be accepted; returns the run id.
 *
 * @example
 * const runId = await acceptRun(p.get(), 'acme', halfYearRequest());
 */
export const acceptRun = async (p: Pipeline, tenant: string, request: RunRequestInput): Promise<string> => {
  const answer = await callApi(p, { routeKey: 'POST /runs', tenant, body: JSON.stringify(request) });
  if (answer.statusCode !== 202) throw new Error(`POST /runs answered ${answer.statusCode}: ${JSON.stringify(answer.body)}`);
  return RunAccepted.parse(answer.body).runId;
};

/**
 * {@link staggeredDeadlineRequest} accepted for a new tenant at T0, with the clock then moved to
 * 2.5 s, when the dispatch tests dispatch it.
 */
export const acceptedForDispatch = async (p: Pipeline): Promise<{ tenantId: string; runId: string }> => {
  p.clock.moveTo(0);
  const tenantId = uniqueName('tenant');
  const runId = await acceptRun(p, tenantId, staggeredDeadlineRequest());
  p.clock.moveTo(2_500);
  return { tenantId, runId };
};
