import type { APIGatewayProxyEventV2WithJWTAuthorizer } from 'aws-lambda';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { JWTPayload } from 'jose';
import { z } from 'zod';
import { jsonReply, listenOnLoopback, type HttpReply } from './http-server';
import { matchRoute, type CorsConfiguration, type HttpApiSpec, type HttpRoute, type RouteMatch } from './http-routes';
import type { JwtAuthority } from './jwt-authority';
import type { InvokeResult, LambdaInvoker } from './lambda-client';
import { silentLog, type LocalLog } from './log';
import { LOCAL_ACCOUNT_ID } from './template';

/**
 * A local API Gateway HTTP API: route selection, the JWT authorizer, the payload-format-2.0
 * event, the Lambda proxy response mapping, CORS, and API Gateway's own error bodies.
 */

/**
 * Where the local authority's public keys are served, next to the API it protects.
 *
 * @example
 * await fetch(`${cloud.apiUrl}${JWKS_PATH}`)
 */
export const JWKS_PATH = '/.well-known/jwks.json';

const UNAUTHORIZED = { message: 'Unauthorized' } as const;
const FORBIDDEN = { message: 'Forbidden' } as const;
const NOT_FOUND = { message: 'Not Found' } as const;
const INTERNAL_ERROR = { message: 'Internal Server Error' } as const;
const SERVICE_UNAVAILABLE = { message: 'Service Unavailable' } as const;

type Headers = Readonly<Record<string, string>>;

/**
 * Multi-valued headers reach the function joined with commas, as API Gateway sends them. Built
 * with `Object.fromEntries`, so a header named `__proto__` is a header like any other, never the
 * object's prototype.
 */
const lowerCaseHeaders = (request: IncomingMessage): Record<string, string> =>
  Object.fromEntries(
    Object.entries(request.headers).flatMap(([name, value]) =>
      value === undefined || name === 'cookie' ? [] : [[name, Array.isArray(value) ? value.join(',') : value]],
    ),
  );

/**
 * The query parameters as API Gateway passes them: a repeated one joined with commas. Collected in
 * a `Map`, so every name (`__proto__`, `constructor`) is a parameter the function sees and can refuse.
 */
const queryParameters = (search: URLSearchParams): Record<string, string> | undefined => {
  const parameters = new Map<string, string>();
  for (const [name, value] of search) parameters.set(name, parameters.has(name) ? `${parameters.get(name)},${value}` : value);
  return parameters.size > 0 ? Object.fromEntries(parameters) : undefined;
};

/** A request's target, split without resolving it. */
export interface RequestTarget {
  /** The path exactly as sent, still percent-encoded. */
  readonly pathname: string;
  /** The query string with its `?`, or `''`. */
  readonly search: string;
  readonly searchParams: URLSearchParams;
}

/**
 * Splits a request target into its path and query without resolving dot segments. The WHATWG URL
 * parser would turn `/runs/%2e%2e` into `/`, a request for another resource than the one sent;
 * API Gateway routes the path as sent, so `/runs/%2e%2e` is `GET /runs/{runId}` with the id `..`
 * (no such run). An absolute-form target (`http://host/path`) keeps only its path and query.
 *
 * @example
 * requestTarget('/runs/%2e%2e?x=1').pathname // '/runs/%2e%2e'
 */
export const requestTarget = (raw: string): RequestTarget => {
  const originForm = raw.replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/, '');
  const withoutFragment = originForm.split('#', 1)[0] ?? '';
  const queryAt = withoutFragment.indexOf('?');
  const path = queryAt < 0 ? withoutFragment : withoutFragment.slice(0, queryAt);
  const query = queryAt < 0 ? '' : withoutFragment.slice(queryAt + 1);
  return { pathname: path.startsWith('/') ? path : `/${path}`, search: query === '' ? '' : `?${query}`, searchParams: new URLSearchParams(query) };
};

/** API Gateway passes text bodies as they are and anything else base64-encoded. */
const isTextual = (contentType: string | undefined): boolean =>
  contentType === undefined || /^text\/|json|xml|javascript|x-www-form-urlencoded|graphql/i.test(contentType);

/** `12/Mar/2020:19:03:58 +0000`, API Gateway's request time format. */
const requestTime = (date: Date): string => {
  const [, day, month, year, time] = date.toUTCString().split(' ');
  return `${day}/${month}/${year}:${time} +0000`;
};

/**
 * A claim as API Gateway's JWT authorizer hands it to the integration
 * (`requestContext.authorizer.jwt.claims`): always a string. A string stays as it is; a number or
 * boolean becomes its text (`123` → `"123"`, so the function cannot tell it from the string
 * `"123"`); an array becomes its items space-separated in brackets (`["a","b"]` → `"[a b]"`, an item
 * that is not a string as its JSON); an object becomes its JSON text; a null-valued claim is left
 * out. Functions that must know a claim's JSON type read it from the verified token itself (the
 * API handler does, for the tenant claim).
 */
const claimText = (value: unknown): string | undefined => {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return `[${value.map((item) => (typeof item === 'string' ? item : JSON.stringify(item))).join(' ')}]`;
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
};

const claimTexts = (claims: JWTPayload): Record<string, string> =>
  Object.fromEntries(
    Object.entries(claims).flatMap(([name, value]) => {
      const text = claimText(value);
      return text === undefined ? [] : [[name, text]];
    }),
  );

const jwtAuthorizerContext = (claims: JWTPayload) => {
  const scope = typeof claims.scope === 'string' ? claims.scope : typeof claims.scp === 'string' ? claims.scp : undefined;
  return {
    jwt: {
      claims: claimTexts(claims),
      scopes: scope ? scope.split(' ').filter((item) => item !== '') : null,
    },
  };
};

interface RequestFacts {
  readonly request: IncomingMessage;
  readonly url: RequestTarget;
  readonly body: Buffer;
  readonly requestId: string;
  readonly received: Date;
}

/**
 * The payload-format-2.0 event API Gateway sends to a Lambda proxy integration.
 *
 * @example
 * const event = proxyEvent(facts, match, 'abcdef1234', claims);
 * event.requestContext.authorizer.jwt.claims.sub;
 */
export const proxyEvent = (facts: RequestFacts, match: RouteMatch, apiId: string, claims: JWTPayload | undefined): APIGatewayProxyEventV2WithJWTAuthorizer => {
  const sourceIp = facts.request.socket.remoteAddress?.replace(/^::ffff:/, '') ?? '127.0.0.1';
  const headers: Record<string, string> = {
    ...lowerCaseHeaders(facts.request),
    // API Gateway adds these for every request it proxies.
    'x-forwarded-for': sourceIp,
    'x-forwarded-port': String(facts.request.socket.localPort ?? ''),
    'x-forwarded-proto': 'http',
  };
  const cookies = facts.request.headers.cookie?.split(';').map((cookie) => cookie.trim());
  const text = isTextual(headers['content-type']);
  const host = headers.host ?? '127.0.0.1';
  const query = queryParameters(facts.url.searchParams);
  const event = {
    version: '2.0',
    routeKey: match.route.routeKey,
    rawPath: facts.url.pathname,
    rawQueryString: facts.url.search.replace(/^\?/, ''),
    ...(cookies ? { cookies } : {}),
    headers,
    ...(query ? { queryStringParameters: query } : {}),
    requestContext: {
      accountId: LOCAL_ACCOUNT_ID,
      apiId,
      ...(claims ? { authorizer: jwtAuthorizerContext(claims) } : {}),
      domainName: host,
      domainPrefix: host.split('.')[0] ?? host,
      http: {
        method: facts.request.method ?? 'GET',
        path: facts.url.pathname,
        protocol: `HTTP/${facts.request.httpVersion}`,
        sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: facts.requestId,
      routeKey: match.route.routeKey,
      stage: '$default',
      time: requestTime(facts.received),
      timeEpoch: facts.received.getTime(),
    },
    ...(Object.keys(match.pathParameters).length > 0 ? { pathParameters: { ...match.pathParameters } } : {}),
    ...(facts.body.length > 0 ? { body: text ? facts.body.toString('utf8') : facts.body.toString('base64') } : {}),
    isBase64Encoded: facts.body.length > 0 && !text,
  };
  // The JWT-authorizer event type requires `authorizer`; public routes send the same shape without it, as API Gateway does.
  return event as APIGatewayProxyEventV2WithJWTAuthorizer;
};

const StructuredResponse = z.looseObject({
  statusCode: z.number().int().min(100).max(599),
  headers: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  cookies: z.array(z.string()).optional(),
  body: z.string().optional(),
  isBase64Encoded: z.boolean().optional(),
});

/**
 * Maps a Lambda result to the HTTP response the way API Gateway does for format 2.0: a result
 * with `statusCode` is a response; any other JSON is a 200 `application/json` body; a malformed
 * response or a function error is a 500.
 *
 * @example
 * proxyResponse({ ok: true, payload: { hello: 'world' } }).status; // 200
 */
export const proxyResponse = (outcome: InvokeResult): HttpReply => {
  if (!outcome.ok) return jsonReply(500, INTERNAL_ERROR);
  const payload = outcome.payload;
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload) || !('statusCode' in payload)) {
    return jsonReply(200, payload);
  }
  const response = StructuredResponse.safeParse(payload);
  if (!response.success) return jsonReply(500, INTERNAL_ERROR);
  const { statusCode, headers = {}, cookies = [], body = '', isBase64Encoded } = response.data;
  const lowered = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), String(value)]));
  return {
    status: statusCode,
    headers: { ...lowered, ...(cookies.length > 0 ? { 'set-cookie': cookies } : {}) },
    body: isBase64Encoded ? Buffer.from(body, 'base64') : body,
  };
};

const allowedOrigin = (cors: CorsConfiguration, origin: string | undefined): string | undefined => {
  if (origin === undefined) return undefined;
  if (cors.AllowOrigins.includes(origin)) return origin;
  return cors.AllowOrigins.includes('*') ? '*' : undefined;
};

const corsHeaders = (cors: CorsConfiguration | undefined, origin: string | undefined): Headers => {
  const allowed = cors ? allowedOrigin(cors, origin) : undefined;
  if (!cors || !allowed) return {};
  return {
    'access-control-allow-origin': allowed,
    ...(cors.ExposeHeaders.length > 0 ? { 'access-control-expose-headers': cors.ExposeHeaders.join(',') } : {}),
    ...(String(cors.AllowCredentials) === 'true' ? { 'access-control-allow-credentials': 'true' } : {}),
  };
};

/** API Gateway answers CORS preflight itself, whether or not an OPTIONS route exists. */
const preflight = (cors: CorsConfiguration, request: IncomingMessage): HttpReply => {
  const base = corsHeaders(cors, request.headers.origin);
  if (!base['access-control-allow-origin']) return { status: 204 };
  const requested = request.headers['access-control-request-headers'];
  const allowHeaders = cors.AllowHeaders.includes('*') && requested ? requested : cors.AllowHeaders.join(',');
  return {
    status: 204,
    headers: {
      ...base,
      'access-control-allow-methods': cors.AllowMethods.join(','),
      ...(allowHeaders ? { 'access-control-allow-headers': allowHeaders } : {}),
      ...(cors.MaxAge === undefined ? {} : { 'access-control-max-age': String(cors.MaxAge) }),
    },
  };
};

type AuthOutcome = { readonly ok: true; readonly claims: JWTPayload | undefined } | { readonly ok: false; readonly reply: HttpReply };

const bearer = (value: string | string[] | undefined): string | undefined => {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  return text.replace(/^Bearer\s+/i, '').trim() || undefined;
};

const authorize = async (route: HttpRoute, request: IncomingMessage, authority: JwtAuthority): Promise<AuthOutcome> => {
  if (route.auth.type === 'NONE') return { ok: true, claims: undefined };
  const token = bearer(request.headers[route.auth.identityHeader]);
  if (!token) return { ok: false, reply: jsonReply(401, UNAUTHORIZED) };
  const verified = await authority.verify(token);
  if (!verified.ok) {
    const challenge = `Bearer scope="" error="invalid_token" error_description="${verified.reason.replaceAll('"', "'")}"`;
    return { ok: false, reply: jsonReply(401, UNAUTHORIZED, { 'www-authenticate': challenge }) };
  }
  const granted = jwtAuthorizerContext(verified.claims).jwt.scopes ?? [];
  if (route.auth.scopes.length > 0 && !route.auth.scopes.some((scope) => granted.includes(scope))) {
    return { ok: false, reply: jsonReply(403, FORBIDDEN) };
  }
  return { ok: true, claims: verified.claims };
};

const withTimeout = async (work: Promise<InvokeResult>, timeoutMs: number): Promise<InvokeResult | 'timeout'> => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
};

/** Pages the local API serves itself, without auth: `undefined` for a request they do not answer. */
export type StaticPages = (method: string, pathname: string) => Promise<HttpReply | undefined>;

/** The running local API. */
export interface LocalHttpApi {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * Serves the template's HTTP API on 127.0.0.1.
 *
 * @example
 * const api = await startHttpApi({ spec, lambda, authority });
 * await fetch(`${api.url}/runs/r-1`, { headers: { authorization: `Bearer ${token}` } });
 */
export const startHttpApi = async (options: {
  spec: HttpApiSpec;
  lambda: LambdaInvoker;
  authority: JwtAuthority;
  port?: number;
  log?: LocalLog;
  /**
   * Public static pages answered before route selection (the local viewer at `/`); a request
   * they answer `undefined` to goes to the routes.
   */
  pages?: StaticPages;
}): Promise<LocalHttpApi> => {
  const log = options.log ?? silentLog;
  const { spec, authority } = options;

  const handle = async (request: IncomingMessage, body: Buffer, requestId: string): Promise<HttpReply> => {
    const url = requestTarget(request.url ?? '/');
    const method = request.method ?? 'GET';
    if (method === 'GET' && url.pathname === JWKS_PATH) return jsonReply(200, authority.jwks);
    const page = await options.pages?.(method, url.pathname);
    if (page) return page;
    if (method === 'OPTIONS' && spec.cors && request.headers['access-control-request-method']) return preflight(spec.cors, request);
    const match = matchRoute(spec.routes, method, url.pathname);
    if (!match) return jsonReply(404, NOT_FOUND);
    const auth = await authorize(match.route, request, authority);
    if (!auth.ok) return auth.reply;
    const event = proxyEvent({ request, url, body, requestId, received: new Date() }, match, spec.apiId, auth.claims);
    const outcome = await withTimeout(options.lambda.invoke(match.route.functionName, event), match.route.integrationTimeoutMs);
    if (outcome === 'timeout') return jsonReply(503, SERVICE_UNAVAILABLE);
    if (!outcome.ok)
      log({ level: 'warn', component: 'http-api', message: `${match.route.routeKey}: ${outcome.error.errorType}: ${outcome.error.errorMessage}` });
    return proxyResponse(outcome);
  };

  const server = await listenOnLoopback(
    async (request, body) => {
      const requestId = randomBytes(10).toString('base64');
      const reply = await handle(request, body, requestId);
      // CORS headers configured on the API override any the integration returned.
      const cors = corsHeaders(spec.cors, request.headers.origin);
      return { ...reply, headers: { ...reply.headers, ...cors, 'apigw-requestid': requestId } };
    },
    {
      ...(options.port === undefined ? {} : { port: options.port }),
      onError: (error) => log({ level: 'error', component: 'http-api', message: String(error) }),
    },
  );
  return { url: server.url, port: server.port, stop: () => server.close() };
};
