import type { APIGatewayProxyEventV2WithJWTAuthorizer, APIGatewayProxyResultV2 } from 'aws-lambda';
import { MCP_PATH, ROUTE_QUERY_PARAMETERS } from '../contract';

/** The api function's handler, as API Gateway invokes it. */
export type ApiHandler = (event: APIGatewayProxyEventV2WithJWTAuthorizer, context?: unknown) => Promise<APIGatewayProxyResultV2>;

/** Statuses whose answers have no body (a `Response` refuses one). */
const NULL_BODY_STATUSES: ReadonlySet<number> = new Set([101, 204, 205, 304]);

/**
 * API Gateway's route selection over the run routes: the route key and path parameters of a
 * request, or undefined when no route matches. The MCP route itself is never matched, so a tool
 * cannot call back into MCP.
 *
 * @example
 * matchRoute('GET', '/runs/r-1/subtasks') // { routeKey: 'GET /runs/{runId}/subtasks', pathParameters: { runId: 'r-1' } }
 */
export const matchRoute = (method: string, path: string): { routeKey: string; pathParameters: Record<string, string> } | undefined => {
  const segments = path.split('/').slice(1);
  for (const routeKey of Object.keys(ROUTE_QUERY_PARAMETERS)) {
    const [routeMethod, routePath = ''] = routeKey.split(' ');
    if (routeMethod !== method || routePath === MCP_PATH) continue;
    const pattern = routePath.split('/').slice(1);
    if (pattern.length !== segments.length) continue;
    const pathParameters: Record<string, string> = {};
    const matches = pattern.every((part, i) => {
      const segment = segments[i] ?? '';
      if (!part.startsWith('{')) return part === segment;
      try {
        pathParameters[part.slice(1, -1)] = decodeURIComponent(segment);
      } catch {
        // A malformed escape is still this route: the router answers it 404, like API Gateway's own.
        pathParameters[part.slice(1, -1)] = '';
      }
      return segment !== '';
    });
    if (matches) return { routeKey, pathParameters };
  }
  return undefined;
};

const bodyText = (body: BodyInit | null | undefined): string | undefined => {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  throw new TypeError('an in-process request body must be a string');
};

/**
 * A `fetch` that answers the run routes by calling the api handler in this process, as the caller
 * of `outer`: the new event keeps the outer request's authorizer context (its verified JWT
 * claims), so the tenant of every inner request is the outer token's, exactly as API Gateway would
 * make it. The MCP route's tools use it to reach the HTTP API through the ordinary client without
 * another trip through API Gateway.
 *
 * @example
 * const client = createTesseraClient({ apiUrl: 'https://in-process', token: '', fetch: inProcessFetch(event, handler) });
 */
export const inProcessFetch =
  (outer: APIGatewayProxyEventV2WithJWTAuthorizer, handle: ApiHandler): typeof fetch =>
  async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const method = (init?.method ?? 'GET').toUpperCase();
    const route = matchRoute(method, url.pathname);
    if (route === undefined) return Response.json({ message: 'Not Found' }, { status: 404 });
    const headers: Record<string, string> = Object.fromEntries(new Headers(init?.headers).entries());
    const query = Object.fromEntries(url.searchParams.entries());
    const body = bodyText(init?.body);
    const event: APIGatewayProxyEventV2WithJWTAuthorizer = {
      ...outer,
      routeKey: route.routeKey,
      rawPath: url.pathname,
      rawQueryString: url.search.slice(1),
      // The authorization the outer request was admitted with, whatever the client was given.
      headers: { ...headers, ...(outer.headers.authorization === undefined ? {} : { authorization: outer.headers.authorization }) },
      queryStringParameters: Object.keys(query).length > 0 ? query : undefined,
      pathParameters: Object.keys(route.pathParameters).length > 0 ? route.pathParameters : undefined,
      body,
      isBase64Encoded: false,
      requestContext: { ...outer.requestContext, routeKey: route.routeKey, http: { ...outer.requestContext.http, method, path: url.pathname } },
    };
    const result = await handle(event);
    if (typeof result === 'string') return new Response(result, { status: 200 });
    const status = result.statusCode ?? 200;
    const text = result.body === undefined ? null : result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body;
    const responseHeaders = Object.entries(result.headers ?? {}).map(([name, value]): [string, string] => [name, String(value)]);
    return new Response(NULL_BODY_STATUSES.has(status) ? null : text, { status, headers: responseHeaders });
  };
