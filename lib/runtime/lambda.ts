import { Logger } from '@aws-lambda-powertools/logger';

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
 * findings, tokens and model text are never logged.
 */
export const createLogger = (serviceName: string, env: Readonly<Record<string, string | undefined>> = {}): Logger =>
  new Logger({
    serviceName,
    logLevel: (env.POWERTOOLS_LOG_LEVEL ?? 'INFO') as 'INFO',
  });
