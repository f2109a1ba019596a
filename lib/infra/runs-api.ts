import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpJwtAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { MCP_PATH } from '../contract/routes';
import { TOKEN_HEADER } from '../runtime/tenant';

/** Who may call the API: a JWT issuer, the audiences it mints for, and where the tenant is. */
export interface JwtAuthConfig {
  /** Token issuer URL, such as `https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbC`. */
  readonly issuer: string;
  /** Accepted `aud` (or, for access tokens without one, `client_id`) values. */
  readonly audiences: readonly string[];
  /** Claim that names the caller's tenant. @default 'custom:tenant' */
  readonly tenantClaim?: string;
}

/** Stage-wide request limits. */
export interface ApiThrottle {
  /** Steady-state requests per second. */
  readonly rateLimit: number;
  /** Requests allowed in a burst above the rate. */
  readonly burstLimit: number;
}

export interface RunsApiProps {
  readonly handler: lambda.IFunction;
  readonly auth: JwtAuthConfig;
  /** Browser origins allowed by CORS; empty means no CORS configuration at all. */
  readonly corsAllowedOrigins: readonly string[];
  readonly throttle: ApiThrottle;
  readonly logRetention: logs.RetentionDays;
  readonly logRemovalPolicy: RemovalPolicy;
}

/**
 * The public routes (docs/api.md), and the MCP endpoint (docs/agents.md: stateless Streamable
 * HTTP, `GET` answered 405). Each one requires a valid JWT.
 */
export const RUN_ROUTES = [
  { method: apigw.HttpMethod.POST, path: '/runs' },
  { method: apigw.HttpMethod.GET, path: '/runs' },
  { method: apigw.HttpMethod.GET, path: '/runs/{runId}' },
  { method: apigw.HttpMethod.GET, path: '/runs/{runId}/subtasks' },
  { method: apigw.HttpMethod.POST, path: '/runs/{runId}/cancel' },
  { method: apigw.HttpMethod.POST, path: MCP_PATH },
  { method: apigw.HttpMethod.GET, path: MCP_PATH },
] as const;

/*
 * One JSON line per request with identifiers and outcomes only; no headers, bodies or tokens.
 * `sub` lets an operator follow one caller without logging what they sent.
 */
const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  requestTime: '$context.requestTime',
  routeKey: '$context.routeKey',
  status: '$context.status',
  responseLength: '$context.responseLength',
  latencyMs: '$context.responseLatency',
  integrationLatencyMs: '$context.integrationLatency',
  integrationError: '$context.integrationErrorMessage',
  authorizerError: '$context.authorizer.error',
  sub: '$context.authorizer.claims.sub',
  sourceIp: '$context.identity.sourceIp',
} as const;

/**
 * The HTTP API of tessera: five run routes and MCP, all behind a JWT authorizer and integrated with one
 * Lambda function (payload format 2.0), with stage throttling, JSON access logs, and CORS only
 * for the origins given.
 *
 * @example
 * const api = new RunsApi(this, 'Api', {
 *   handler: apiFunction, auth: { issuer, audiences: [clientId] }, corsAllowedOrigins: [],
 *   throttle: { rateLimit: 20, burstLimit: 40 }, logRetention, logRemovalPolicy,
 * });
 * new CfnOutput(this, 'ApiUrl', { value: api.url });
 */
export class RunsApi extends Construct {
  readonly httpApi: apigw.HttpApi;
  readonly stage: apigw.HttpStage;
  readonly accessLogs: logs.LogGroup;
  /** Base URL of the API, ending in `/`. */
  readonly url: string;

  constructor(scope: Construct, id: string, props: RunsApiProps) {
    super(scope, id);
    const authorizer = new HttpJwtAuthorizer('Jwt', props.auth.issuer, {
      jwtAudience: [...props.auth.audiences],
      identitySource: [`$request.header.${TOKEN_HEADER}`],
    });
    this.httpApi = new apigw.HttpApi(this, 'HttpApi', {
      description: 'tessera runs API',
      // Every route gets the JWT authorizer unless it names another, and none does.
      defaultAuthorizer: authorizer,
      corsPreflight: props.corsAllowedOrigins.length > 0 ? corsFor(props.corsAllowedOrigins) : undefined,
      // The default stage cannot take throttling or access logs from these props; ours can.
      createDefaultStage: false,
    });
    this.accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: props.logRetention,
      removalPolicy: props.logRemovalPolicy,
    });
    this.stage = new apigw.HttpStage(this, 'Stage', {
      httpApi: this.httpApi,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: props.throttle.rateLimit, burstLimit: props.throttle.burstLimit },
      detailedMetricsEnabled: true,
      accessLogSettings: {
        destination: new apigw.LogGroupLogDestination(this.accessLogs),
        format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
      },
    });
    this.url = this.stage.url;
    const integration = new HttpLambdaIntegration('Runs', props.handler, {
      payloadFormatVersion: apigw.PayloadFormatVersion.VERSION_2_0,
    });
    for (const route of RUN_ROUTES) {
      this.httpApi.addRoutes({ path: route.path, methods: [route.method], integration, authorizer });
    }
  }
}

const corsFor = (origins: readonly string[]): apigw.CorsPreflightOptions => ({
  allowOrigins: [...origins],
  allowMethods: [apigw.CorsHttpMethod.GET, apigw.CorsHttpMethod.POST],
  allowHeaders: ['authorization', 'content-type', 'idempotency-key', 'if-none-match', 'prefer', 'mcp-protocol-version'],
  exposeHeaders: ['location', 'etag', 'preference-applied'],
  maxAge: Duration.hours(1),
});
