import type { APIGatewayProxyResultV2 } from 'aws-lambda';
import { planRequest, type PlanDeps } from '../application/plan-request';
import { createTesseraClient } from '../client';
import { MCP_PATH } from '../contract';
import { answerMcpRequest } from '../mcp/http';
import { createTesseraMcpServer } from '../mcp/server';
import { inProcessFetch, type ApiHandler } from './in-process';
import { routeRequests, type ApiRequest, type Route } from './router';

/** What the router itself reads of the deps. */
type RouterDeps = Parameters<typeof routeRequests>[0];

/**
 * The longest `wait_for_run` over HTTP: API Gateway gives up on an integration after 30 s, so a
 * wait ends well before, and the agent calls again.
 */
export const HTTP_MAX_WAIT_SECONDS = 20;

/** Room a wait leaves before the invocation's answer is due, to write the summary. */
const WAIT_ROOM_SECONDS = 3;

/**
 * The origin of the MCP route's requests: the one its transport reads, and the one its tools'
 * client calls in process (`inProcessFetch` reads only the path). Only path, query, headers and
 * body matter, so the origin is fixed rather than taken from the event's `domainName`: an
 * emulator's (`<apiId>.execute-api.127.0.0.1`) ends in a number, which a WHATWG URL parses as an
 * IPv4 address, and refuses.
 */
const MCP_REQUEST_ORIGIN = 'https://in-process';

/** The API Gateway request as the web-standard `Request` the MCP transport handles. */
export const webRequest = (request: Pick<ApiRequest, 'event' | 'body'>): Request => {
  const { event } = request;
  const headers = Object.entries(event.headers).flatMap(([name, value]): [string, string][] => (value === undefined ? [] : [[name, value]]));
  const url = `${MCP_REQUEST_ORIGIN}${event.rawPath}${event.rawQueryString ? `?${event.rawQueryString}` : ''}`;
  const method = event.requestContext.http.method;
  return new Request(url, { method, headers, ...(method === 'POST' ? { body: request.body } : {}) });
};

/**
 * `POST /mcp` and `GET /mcp`: the MCP server over stateless Streamable HTTP, as the caller's
 * tenant. Its tools reach the run routes through the ordinary client with an in-process fetch
 * (`inProcessFetch`), so the tenant of every call is the one of the token API Gateway verified for
 * this request, and another tenant's run is "not found" as on every route.
 *
 * @example
 * const handler = routeRequests(deps, { ...runRoutes, ...mcpRoutes(deps, (event) => handler(event)) });
 */
export const mcpRoutes = (deps: PlanDeps, api: ApiHandler): Record<string, Route> => {
  const plan = planRequest(deps);
  const route: Route = async (request): Promise<APIGatewayProxyResultV2> => {
    const left = Math.floor((request.answerBy - Date.now()) / 1000) - WAIT_ROOM_SECONDS;
    const maxWaitSeconds = Math.max(1, Math.min(HTTP_MAX_WAIT_SECONDS, left));
    const client = createTesseraClient({ apiUrl: MCP_REQUEST_ORIGIN, token: '', fetch: inProcessFetch(request.event, api), readRetryDelaysMs: [] });
    const response = await answerMcpRequest(webRequest(request), () => createTesseraMcpServer({ client, plan, maxWaitSeconds }));
    return { statusCode: response.status, headers: Object.fromEntries(response.headers.entries()), body: await response.text() };
  };
  return { [`POST ${MCP_PATH}`]: route, [`GET ${MCP_PATH}`]: route };
};

/**
 * The api function's router over its run routes and, beside them, the MCP routes, whose tools
 * call those run routes in process.
 *
 * @example
 * export const createHandler = (deps: ApiDeps) => routeRequestsWithMcp(deps, { 'GET /runs/{runId}': (request) => … });
 */
export const routeRequestsWithMcp = (deps: PlanDeps & RouterDeps, routes: Readonly<Record<string, Route>>): ApiHandler => {
  const runs = routeRequests(deps, routes);
  return routeRequests(deps, { ...routes, ...mcpRoutes(deps, runs) });
};
