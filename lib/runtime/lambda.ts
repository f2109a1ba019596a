import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { METRICS } from '../observability/metrics';
import { POWERTOOLS_ENV } from './environment';

/**
 * Every logger `createLogger` made in this process: each invocation's Lambda context is added to
 * them all (`addContext`), so every log line of every component carries the request id, the
 * function's name, version and memory, and whether the invocation was a cold start, without a
 * handler passing its context around.
 */
const invocationLoggers = new Set<Logger>();

/** The Lambda context, as far as Powertools' `addContext` reads it; anything else (a test's call) adds nothing. */
const isLambdaContext = (context: unknown): context is Context =>
  typeof context === 'object' && context !== null && typeof (context as { awsRequestId?: unknown }).awsRequestId === 'string';

/**
 * Builds a handler on its first invocation and reuses it afterwards, so configuration is parsed
 * and clients are created once per cold start, while tests can import the module without an
 * environment. Before each invocation it adds the invocation's Lambda context to every logger
 * (see {@link invocationLoggers}): the one place every handler passes through.
 *
 * @example
 * export const handler = onColdStart(() => createHandler(depsFromEnv(process.env)));
 */
export const onColdStart = <E, R>(build: () => (event: E, context?: unknown) => Promise<R>) => {
  let built: ((event: E, context?: unknown) => Promise<R>) | undefined;
  return (event: E, context?: unknown): Promise<R> => {
    built ??= build();
    if (isLambdaContext(context)) for (const logger of invocationLoggers) logger.addContext(context);
    return built(event, context);
  };
};

/**
 * A structured JSON logger. Log keys are identifiers only (tenant, run, subtask); requests,
 * findings, tokens and model text are never logged. The level comes from the function's
 * `POWERTOOLS_LOG_LEVEL`, else from the process's (which is how the local cloud quiets it). Each
 * line also carries the Lambda context of the invocation it belongs to (`onColdStart`).
 */
export const createLogger = (component: string, env: Readonly<Record<string, string | undefined>> = {}): Logger => {
  const logger = new Logger({
    serviceName: env[POWERTOOLS_ENV.serviceName] ?? 'tessera',
    persistentKeys: { component },
    ...(env[POWERTOOLS_ENV.logLevel] ? { logLevel: env[POWERTOOLS_ENV.logLevel] as 'INFO' } : {}),
  });
  invocationLoggers.add(logger);
  return logger;
};

/**
 * Starts one invocation's log lines: a warm instance keeps its logger between invocations, so the
 * keys of an earlier invocation are dropped before this one's are added.
 *
 * @example
 * startInvocation(deps.logger, { runId, tenantId, round });
 */
export const startInvocation = (logger: Logger, keys: Readonly<Record<string, unknown>>): void => {
  logger.resetKeys();
  logger.appendKeys(keys);
};

/**
 * Run-level metrics (CloudWatch EMF). The service name is a dimension of every metric, and the
 * construct's alarms read it, so it comes from the same `POWERTOOLS_SERVICE_NAME`.
 */
export const createMetrics = (env: Readonly<Record<string, string | undefined>> = {}): Metrics =>
  new Metrics({ namespace: METRICS.namespace, serviceName: env[POWERTOOLS_ENV.serviceName] ?? 'tessera' });

/** Publishes the metrics a handler added, if any (an empty publish only logs a warning). */
export const publishMetrics = (metrics: { hasStoredMetrics(): boolean; publishStoredMetrics(): void }): void => {
  if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
};
