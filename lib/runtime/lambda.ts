import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { METRICS } from '../observability/metrics';
import { POWERTOOLS_ENV } from './environment';

/**
 * Builds a handler on its first invocation and reuses it afterwards, so configuration is parsed
 * and clients are created once per cold start, while tests can import the module without an
 * environment.
 *
 * @example
 * export const handler = onColdStart(() => createHandler(depsFromEnv(process.env)));
 */
export const onColdStart = <E, R>(build: () => (event: E, context?: unknown) => Promise<R>) => {
  let built: ((event: E, context?: unknown) => Promise<R>) | undefined;
  return (event: E, context?: unknown): Promise<R> => {
    built ??= build();
    return built(event, context);
  };
};

/**
 * A structured JSON logger. Log keys are identifiers only (tenant, run, subtask); requests,
 * findings, tokens and model text are never logged. The level comes from the function's
 * `POWERTOOLS_LOG_LEVEL`, else from the process's (which is how the local cloud quiets it).
 */
export const createLogger = (component: string, env: Readonly<Record<string, string | undefined>> = {}): Logger =>
  new Logger({
    serviceName: env[POWERTOOLS_ENV.serviceName] ?? 'tessera',
    persistentKeys: { component },
    ...(env[POWERTOOLS_ENV.logLevel] ? { logLevel: env[POWERTOOLS_ENV.logLevel] as 'INFO' } : {}),
  });

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
