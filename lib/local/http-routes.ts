import { z } from 'zod';
import { TemplateResolutionError, UnsupportedFeatureError } from './errors';
import type { TemplateEntry } from '../template/reader';
import { checkProperties, propertyPath, RESOURCE_TYPES, type TemplateResolver } from './template';

/**
 * An API Gateway HTTP API as the template declares it (routes, their Lambda proxy integrations,
 * JWT authorizers, CORS), and API Gateway's route selection.
 */

/** An HTTP API's CORS settings, as the template's CorsConfiguration gives them. */
export const CorsConfiguration = z.object({
  AllowOrigins: z.array(z.string()).default([]),
  AllowMethods: z.array(z.string()).default([]),
  AllowHeaders: z.array(z.string()).default([]),
  ExposeHeaders: z.array(z.string()).default([]),
  MaxAge: z.coerce.number().int().optional(),
  AllowCredentials: z.union([z.boolean(), z.enum(['true', 'false'])]).optional(),
});
export type CorsConfiguration = z.infer<typeof CorsConfiguration>;

/** How a route is protected: not at all, or by a JWT authorizer with optional required scopes. */
export type RouteAuth =
  { readonly type: 'NONE' } | { readonly type: 'JWT'; readonly authorizer: string; readonly identityHeader: string; readonly scopes: readonly string[] };

/** One route of the HTTP API with its Lambda integration. */
export interface HttpRoute {
  readonly logicalId: string;
  /** `GET /runs/{runId}`, `ANY /{proxy+}` or `$default`. */
  readonly routeKey: string;
  readonly method: string;
  readonly segments: readonly string[];
  /** Function name or ARN of the Lambda proxy integration. */
  readonly functionName: string;
  /** API Gateway gives up on the integration after this long and answers 503. */
  readonly integrationTimeoutMs: number;
  readonly auth: RouteAuth;
}

/** The HTTP API the local cloud serves. */
export interface HttpApiSpec {
  readonly logicalId: string;
  readonly apiId: string;
  readonly cors: CorsConfiguration | undefined;
  readonly routes: readonly HttpRoute[];
}

const ApiProperties = z.looseObject({ ProtocolType: z.literal('HTTP'), CorsConfiguration: CorsConfiguration.optional() });
const RouteProperties = z.looseObject({
  ApiId: z.string(),
  RouteKey: z.string(),
  Target: z.string().optional(),
  AuthorizationType: z.enum(['NONE', 'JWT', 'AWS_IAM', 'CUSTOM']).default('NONE'),
  AuthorizerId: z.string().optional(),
  AuthorizationScopes: z.array(z.string()).default([]),
});
const IntegrationProperties = z.looseObject({
  ApiId: z.string(),
  IntegrationType: z.string(),
  IntegrationUri: z.string(),
  PayloadFormatVersion: z.string().default('2.0'),
  TimeoutInMillis: z.coerce.number().int().min(50).max(30_000).default(30_000),
});
/** The authorizer's issuer and audience are not read: locally, only the local authority can sign. */
const AuthorizerProperties = z.looseObject({
  AuthorizerType: z.string(),
  IdentitySource: z.array(z.string()).default(['$request.header.Authorization']),
});

const parsed = <T>(schema: z.ZodType<T>, entry: TemplateEntry, resolver: TemplateResolver, keys: readonly string[]): T => {
  const properties = entry.resource.Properties ?? {};
  const path = propertyPath(entry.logicalId);
  const picked = Object.fromEntries(keys.filter((key) => key in properties).map((key) => [key, properties[key]]));
  const result = schema.safeParse(resolver.resolve(picked, path));
  if (!result.success) throw new TemplateResolutionError(path, z.prettifyError(result.error));
  return result.data;
};

/** Lambda proxy integrations name the function by ARN, or by API Gateway's invocation URI around it. */
const functionOfUri = (uri: string): string => /\/functions\/(.+)\/invocations$/.exec(uri)?.[1] ?? uri;

const ROUTE_KEYS = ['ApiId', 'RouteKey', 'Target', 'AuthorizationType', 'AuthorizerId', 'AuthorizationScopes'];
const INTEGRATION_KEYS = ['ApiId', 'IntegrationType', 'IntegrationUri', 'PayloadFormatVersion', 'TimeoutInMillis'];
const AUTHORIZER_KEYS = ['AuthorizerType', 'IdentitySource'];

const integrationTarget = (entry: TemplateEntry, resolver: TemplateResolver): { functionName: string; timeoutMs: number } => {
  checkProperties(entry, INTEGRATION_KEYS, ['IntegrationMethod', 'ConnectionType', 'CredentialsArn', 'Description']);
  const props = parsed(IntegrationProperties, entry, resolver, INTEGRATION_KEYS);
  if (props.IntegrationType !== 'AWS_PROXY')
    throw new UnsupportedFeatureError(propertyPath(entry.logicalId, 'IntegrationType'), `integration type ${props.IntegrationType}`);
  if (props.PayloadFormatVersion !== '2.0')
    throw new UnsupportedFeatureError(propertyPath(entry.logicalId, 'PayloadFormatVersion'), `payload format ${props.PayloadFormatVersion}`);
  return { functionName: functionOfUri(props.IntegrationUri), timeoutMs: props.TimeoutInMillis };
};

const identityHeader = (entry: TemplateEntry, sources: readonly string[]): string => {
  const header = sources.length === 1 ? /^\$request\.header\.(.+)$/.exec(sources[0] as string)?.[1] : undefined;
  if (!header)
    throw new UnsupportedFeatureError(
      propertyPath(entry.logicalId, 'IdentitySource'),
      `identity source ${sources.join(', ')} (one request header is emulated)`,
    );
  return header.toLowerCase();
};

const routeAuth = (
  entry: TemplateEntry,
  props: z.infer<typeof RouteProperties>,
  authorizers: ReadonlyMap<string, TemplateEntry>,
  resolver: TemplateResolver,
): RouteAuth => {
  if (props.AuthorizationType === 'NONE') return { type: 'NONE' };
  if (props.AuthorizationType !== 'JWT')
    throw new UnsupportedFeatureError(propertyPath(entry.logicalId, 'AuthorizationType'), `authorization ${props.AuthorizationType}`);
  const authorizer = props.AuthorizerId === undefined ? undefined : authorizers.get(props.AuthorizerId);
  if (!authorizer)
    throw new TemplateResolutionError(propertyPath(entry.logicalId, 'AuthorizerId'), `no authorizer ${String(props.AuthorizerId)} in the template`);
  checkProperties(authorizer, AUTHORIZER_KEYS, ['ApiId', 'Name', 'JwtConfiguration']);
  const config = parsed(AuthorizerProperties, authorizer, resolver, AUTHORIZER_KEYS);
  if (config.AuthorizerType !== 'JWT')
    throw new UnsupportedFeatureError(propertyPath(authorizer.logicalId, 'AuthorizerType'), `authorizer type ${config.AuthorizerType}`);
  return {
    type: 'JWT',
    authorizer: authorizer.logicalId,
    identityHeader: identityHeader(authorizer, config.IdentitySource),
    scopes: props.AuthorizationScopes,
  };
};

const describeRoute = (
  entry: TemplateEntry,
  resolver: TemplateResolver,
  integrations: ReadonlyMap<string, TemplateEntry>,
  authorizers: ReadonlyMap<string, TemplateEntry>,
): HttpRoute => {
  checkProperties(entry, ROUTE_KEYS, ['OperationName']);
  const props = parsed(RouteProperties, entry, resolver, ROUTE_KEYS);
  const integrationId = props.Target?.replace(/^integrations\//, '');
  const integration = integrationId === undefined ? undefined : integrations.get(integrationId);
  if (!integration) throw new TemplateResolutionError(propertyPath(entry.logicalId, 'Target'), `route ${props.RouteKey} has no integration of this template`);
  const [method, path] = props.RouteKey === '$default' ? ['ANY', ''] : props.RouteKey.split(' ', 2);
  const target = integrationTarget(integration, resolver);
  return {
    logicalId: entry.logicalId,
    routeKey: props.RouteKey,
    method: (method as string).toUpperCase(),
    segments: (path ?? '').split('/').filter((segment) => segment !== ''),
    functionName: target.functionName,
    integrationTimeoutMs: target.timeoutMs,
    auth: routeAuth(entry, props, authorizers, resolver),
  };
};

const byRef = (entries: readonly TemplateEntry[], resolver: TemplateResolver, apiId: string): Map<string, TemplateEntry> =>
  new Map(
    entries
      .filter((entry) => resolver.resolveString(entry.resource.Properties?.ApiId, propertyPath(entry.logicalId, 'ApiId')) === apiId)
      .map((entry) => [resolver.physical(entry.logicalId).ref, entry]),
  );

const requireDefaultStage = (api: TemplateEntry, resolver: TemplateResolver, apiId: string): void => {
  const stages = [...byRef(resolver.entries(RESOURCE_TYPES.stage), resolver, apiId).values()];
  const names = stages.map((stage) => resolver.resolveString(stage.resource.Properties?.StageName, propertyPath(stage.logicalId, 'StageName')));
  if (!names.includes('$default'))
    throw new UnsupportedFeatureError(`Resources.${api.logicalId}`, `stages ${names.join(', ') || '(none)'} (the local API serves the $default stage)`);
};

/**
 * The template's HTTP API, or `undefined` when it has none. More than one is refused: the local
 * cloud serves one API on one port.
 *
 * @example
 * const api = httpApiFromTemplate(resolver);
 * api?.routes.map((route) => route.routeKey); // ['GET /runs/{runId}', 'POST /runs']
 */
export const httpApiFromTemplate = (resolver: TemplateResolver): HttpApiSpec | undefined => {
  const apis = resolver.entries(RESOURCE_TYPES.httpApi);
  if (apis.length === 0) return undefined;
  if (apis.length > 1) throw new UnsupportedFeatureError(apis.map((api) => `Resources.${api.logicalId}`).join(', '), 'more than one HTTP API');
  const api = apis[0] as TemplateEntry;
  checkProperties(api, ['ProtocolType', 'CorsConfiguration', 'Name'], ['Description', 'Tags', 'DisableExecuteApiEndpoint', 'Version']);
  const props = parsed(ApiProperties, api, resolver, ['ProtocolType', 'CorsConfiguration']);
  const apiId = resolver.physical(api.logicalId).ref;
  requireDefaultStage(api, resolver, apiId);
  const integrations = byRef(resolver.entries(RESOURCE_TYPES.integration), resolver, apiId);
  const authorizers = byRef(resolver.entries(RESOURCE_TYPES.authorizer), resolver, apiId);
  const routes = [...byRef(resolver.entries(RESOURCE_TYPES.route), resolver, apiId).values()].map((route) =>
    describeRoute(route, resolver, integrations, authorizers),
  );
  return { logicalId: api.logicalId, apiId, cors: props.CorsConfiguration, routes };
};

/** The route a request selected and the path parameters it bound. */
export interface RouteMatch {
  readonly route: HttpRoute;
  readonly pathParameters: Readonly<Record<string, string>>;
}

const matchSegments = (pattern: readonly string[], path: readonly string[]): Record<string, string> | undefined => {
  const parameters: Record<string, string> = {};
  for (const [index, segment] of pattern.entries()) {
    const greedy = /^\{(.+)\+\}$/.exec(segment);
    if (greedy && index === pattern.length - 1) {
      if (path.length <= index) return undefined;
      parameters[greedy[1] as string] = path.slice(index).join('/');
      return parameters;
    }
    const actual = path[index];
    if (actual === undefined) return undefined;
    const variable = /^\{(.+)\}$/.exec(segment);
    if (variable) parameters[variable[1] as string] = actual;
    else if (segment !== actual) return undefined;
  }
  return pattern.length === path.length ? parameters : undefined;
};

/** API Gateway prefers literal segments over variables over greedy variables, a method over ANY, and `$default` last. */
const specificity = (route: HttpRoute): number[] => {
  const isDefault = route.routeKey === '$default' ? 0 : 1;
  const greedy = route.segments.some((segment) => segment.endsWith('+}')) ? 0 : 1;
  const literals = route.segments.filter((segment) => !segment.startsWith('{')).length;
  return [isDefault, greedy, route.segments.length, literals, route.method === 'ANY' ? 0 : 1];
};

const compareSpecificity = (a: HttpRoute, b: HttpRoute): number => {
  const [left, right] = [specificity(a), specificity(b)];
  for (const [index, value] of left.entries()) if (value !== right[index]) return (right[index] as number) - value;
  return 0;
};

/**
 * A path segment percent-decoded, or as it came when it is not valid percent-encoding of UTF-8
 * (`%ZZ`, `%E0%A4%A`): route selection never fails on a malformed escape, so such a request
 * still meets the authorizer (no token: 401) and then the function, which finds no run of that id.
 */
const decodeSegment = (segment: string): string => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};

/**
 * Selects the route for a request the way API Gateway does, with path parameters URL-decoded.
 *
 * @example
 * matchRoute(routes, 'GET', '/runs/r-1')?.pathParameters; // { runId: 'r-1' }
 * matchRoute(routes, 'GET', '/runs/%ZZ')?.pathParameters; // { runId: '%ZZ' }
 */
export const matchRoute = (routes: readonly HttpRoute[], method: string, path: string): RouteMatch | undefined => {
  const segments = path
    .split('/')
    .filter((segment) => segment !== '')
    .map(decodeSegment);
  const candidates = [...routes].sort(compareSpecificity);
  for (const route of candidates) {
    if (route.method !== 'ANY' && route.method !== method.toUpperCase()) continue;
    const pathParameters = route.routeKey === '$default' ? {} : matchSegments(route.segments, segments);
    if (pathParameters) return { route, pathParameters };
  }
  return undefined;
};
