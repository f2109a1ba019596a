import type { Context } from 'aws-lambda';
import { randomBytes, randomUUID } from 'node:crypto';
import { resolve as resolvePath } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { HandlerLoadError, TemplateResolutionError, UnsupportedFeatureError } from './errors';
import type { TemplateEntry } from '../template/reader';
import { checkProperties, propertyPath, RESOURCE_TYPES, type TemplateResolver } from './template';
import { HANDLER_METADATA_KEY } from '../infra/handler-metadata';
import type { WorkerRegistry } from '../workers/registry';

/**
 * Runs the template's Lambda functions in this process, each from its own handler module and its
 * own resolved template environment, with a Lambda-like context and the function's timeout.
 */

/** The metadata key naming each function's handler module (written by the CDK construct). */
export { HANDLER_METADATA_KEY };

/** A Lambda handler as the local runtime calls it. */
export type LambdaHandler = (event: unknown, context: Context) => Promise<unknown>;

/**
 * What a handler module exports. `depsFromEnv` receives the function's own environment (never the
 * shared `process.env`), so two functions with different configuration coexist in one process,
 * and the deployment's worker registry (the modules that need none ignore it).
 */
export interface HandlerModule {
  depsFromEnv(env: Record<string, string | undefined>, registry: WorkerRegistry | undefined): unknown;
  createHandler(deps: never): LambdaHandler;
}

/** One AWS::Lambda::Function of the template, resolved to local values. */
export interface LocalFunction {
  readonly logicalId: string;
  readonly name: string;
  readonly arn: string;
  /** Handler module path relative to the repository root; absent when the template does not say. */
  readonly entry: string | undefined;
  readonly timeoutSeconds: number;
  readonly memoryMb: number;
  /** The resolved `Environment.Variables` of the template. */
  readonly environment: Readonly<Record<string, string>>;
}

/**
 * The error document Lambda returns with `X-Amz-Function-Error: Unhandled`.
 *
 * @example
 * FunctionErrorPayload.parse({ errorType: 'Sandbox.Timedout', errorMessage: 'Task timed out after 3.00 seconds' })
 */
export const FunctionErrorPayload = z.object({
  errorType: z.string(),
  errorMessage: z.string(),
  trace: z.array(z.string()).optional(),
});
export type FunctionErrorPayload = z.infer<typeof FunctionErrorPayload>;

/** What one invocation ended with: the handler's result, or Lambda's error document. */
export type InvocationOutcome = { readonly ok: true; readonly result: unknown } | { readonly ok: false; readonly error: FunctionErrorPayload };

/** Function properties the runtime uses; the others have no local effect (code location, IAM, networking, tuning). */
const FUNCTION_PROPERTIES = ['FunctionName', 'Environment', 'Timeout', 'MemorySize', 'Runtime'];
const INERT_FUNCTION_PROPERTIES = [
  'Code',
  'Handler',
  'Role',
  'Architectures',
  'Description',
  'LoggingConfig',
  'TracingConfig',
  'Layers',
  'ReservedConcurrentExecutions',
  'VpcConfig',
  'EphemeralStorage',
  'KmsKeyArn',
  'Tags',
  'SnapStart',
  'RuntimeManagementConfig',
  'RecursiveLoop',
  'CodeSigningConfigArn',
];

const FunctionProperties = z.object({
  Environment: z.object({ Variables: z.record(z.string(), z.string()).optional() }).optional(),
  Timeout: z.coerce.number().int().min(1).default(3),
  MemorySize: z.coerce.number().int().min(128).default(128),
  Runtime: z.string().optional(),
});

const handlerEntry = (entry: TemplateEntry): string | undefined => {
  const value = entry.resource.Metadata?.[HANDLER_METADATA_KEY];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '') {
    throw new TemplateResolutionError(`Resources.${entry.logicalId}.Metadata.${HANDLER_METADATA_KEY}`, 'must be a module path relative to the repository root');
  }
  return value;
};

const describeFunction = (entry: TemplateEntry, resolver: TemplateResolver): LocalFunction => {
  const physical = resolver.physical(entry.logicalId);
  const handler = handlerEntry(entry);
  if (handler !== undefined) checkProperties(entry, FUNCTION_PROPERTIES, INERT_FUNCTION_PROPERTIES);
  const path = propertyPath(entry.logicalId);
  // Only the properties the runtime uses are resolved: Role and Code point at IAM and asset buckets.
  const properties = entry.resource.Properties ?? {};
  const used =
    handler === undefined
      ? {}
      : Object.fromEntries(
          Object.keys(FunctionProperties.shape)
            .filter((key) => key in properties)
            .map((key) => [key, properties[key]]),
        );
  const parsed = FunctionProperties.safeParse(resolver.resolve(used, path));
  if (!parsed.success) throw new TemplateResolutionError(path, z.prettifyError(parsed.error));
  const runtime = parsed.data.Runtime;
  if (handler !== undefined && runtime !== undefined && !runtime.startsWith('nodejs')) {
    throw new UnsupportedFeatureError(propertyPath(entry.logicalId, 'Runtime'), `runtime ${runtime} (only Node.js handlers run locally)`);
  }
  return {
    logicalId: entry.logicalId,
    name: physical.ref,
    arn: physical.attributes.Arn as string,
    entry: handler,
    timeoutSeconds: parsed.data.Timeout,
    memoryMb: parsed.data.MemorySize,
    environment: parsed.data.Environment?.Variables ?? {},
  };
};

/**
 * The template's functions with their resolved configuration. Functions without the
 * `tessera:handler` metadata (CDK's own helpers, say) are listed but cannot be invoked locally.
 *
 * @example
 * const functions = functionsFromTemplate(resolver);
 * functions.find((f) => f.logicalId === 'Dispatch')?.environment.TABLE_NAME;
 */
export const functionsFromTemplate = (resolver: TemplateResolver): LocalFunction[] =>
  resolver.entries(RESOURCE_TYPES.function).map((entry) => describeFunction(entry, resolver));

/** Environment variables the Lambda service sets for every function. */
const reservedEnvironment = (fn: LocalFunction, region: string): Record<string, string> => ({
  AWS_REGION: region,
  AWS_DEFAULT_REGION: region,
  AWS_LAMBDA_FUNCTION_NAME: fn.name,
  AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memoryMb),
  AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
  AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${fn.name}`,
});

/** How handler modules are imported; tests and tools may swap it, the default is a dynamic `import()`. */
export type ModuleImporter = (url: string) => Promise<unknown>;

const isHandlerModule = (value: unknown): value is HandlerModule =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as Record<string, unknown>).depsFromEnv === 'function' &&
  typeof (value as Record<string, unknown>).createHandler === 'function';

const buildHandler = async (
  fn: LocalFunction,
  env: Record<string, string>,
  repoRoot: string,
  importModule: ModuleImporter,
  registry: WorkerRegistry | undefined,
): Promise<LambdaHandler> => {
  const entry = fn.entry as string;
  let loaded: unknown;
  try {
    loaded = await importModule(pathToFileURL(resolvePath(repoRoot, entry)).href);
  } catch (error) {
    throw new HandlerLoadError(
      fn.name,
      entry,
      `cannot import the handler module (run the local cloud through tsx or vitest so .ts modules load): ${(error as Error).message}`,
      { cause: error },
    );
  }
  if (!isHandlerModule(loaded)) throw new HandlerLoadError(fn.name, entry, 'the module must export depsFromEnv(env) and createHandler(deps)');
  try {
    const handler: unknown = loaded.createHandler((await loaded.depsFromEnv(env, registry)) as never);
    if (typeof handler !== 'function') throw new Error('createHandler(deps) did not return a function');
    return handler as LambdaHandler;
  } catch (error) {
    throw new HandlerLoadError(fn.name, entry, `building the handler from its environment failed: ${(error as Error).message}`, { cause: error });
  }
};

/** A function whose handler was built. */
export interface RunnableFunction extends LocalFunction {
  /** The environment its handler was built from: template variables, Lambda's reserved ones, the local endpoints. */
  readonly runtimeEnvironment: Readonly<Record<string, string>>;
  readonly handler: LambdaHandler | undefined;
}

/**
 * Loads every function's handler module once and builds its handler from its own environment.
 * Any failure stops the start-up with the function and module named.
 *
 * @example
 * const functions = await loadFunctions({ resolver, repoRoot, runtimeEnvironment: { AWS_ENDPOINT_URL_DYNAMODB: ddb } });
 */
export const loadFunctions = async (options: {
  resolver: TemplateResolver;
  repoRoot: string;
  /** Added to every function's environment (region, credentials, local endpoints); wins over the template. */
  runtimeEnvironment?: Readonly<Record<string, string>>;
  importModule?: ModuleImporter;
  /** The worker registry handed to every handler module's `depsFromEnv(env, registry)`. */
  registry?: WorkerRegistry;
}): Promise<RunnableFunction[]> => {
  const importModule = options.importModule ?? ((url: string) => import(url));
  const functions = functionsFromTemplate(options.resolver);
  // The modules are imported side by side first (their loading overlaps); a module that fails is
  // imported again below, where its failure is reported with its function.
  const entries = [...new Set(functions.flatMap((fn) => (fn.entry === undefined ? [] : [fn.entry])))];
  await Promise.allSettled(entries.map((entry) => importModule(pathToFileURL(resolvePath(options.repoRoot, entry)).href)));
  const loaded: RunnableFunction[] = [];
  for (const fn of functions) {
    const runtimeEnvironment = { ...fn.environment, ...reservedEnvironment(fn, options.resolver.region), ...options.runtimeEnvironment };
    const handler = fn.entry === undefined ? undefined : await buildHandler(fn, runtimeEnvironment, options.repoRoot, importModule, options.registry);
    loaded.push({ ...fn, runtimeEnvironment, handler });
  }
  return loaded;
};

/**
 * Finds a function by name, ARN, partial ARN (`account:function:name`) or `$LATEST`-qualified
 * ARN, as Lambda's Invoke accepts them. Versions and aliases do not exist locally.
 *
 * @example
 * findFunction(functions, 'arn:aws:lambda:us-east-1:000000000000:function:Dispatch')
 */
export const findFunction = <F extends LocalFunction>(functions: readonly F[], nameOrArn: string, qualifier?: string): F | undefined => {
  if (qualifier !== undefined && qualifier !== '$LATEST') return undefined;
  const unqualified = nameOrArn.replace(/:\$LATEST$/, '');
  const partial = unqualified.includes(':function:');
  return functions.find((fn) => fn.name === unqualified || fn.arn === unqualified || (partial && fn.arn.endsWith(`:${unqualified}`)));
};

const logStreamName = (): string => {
  const day = new Date().toISOString().slice(0, 10).replaceAll('-', '/');
  return `${day}/[$LATEST]${randomBytes(16).toString('hex')}`;
};

const callbackStyleUnsupported = (): never => {
  throw new Error('callback-style handlers (context.done/succeed/fail) are not supported; return a promise');
};

const lambdaContext = (fn: LocalFunction, requestId: string, invokedFunctionArn: string, deadline: number): Context => ({
  callbackWaitsForEmptyEventLoop: true,
  functionName: fn.name,
  functionVersion: '$LATEST',
  invokedFunctionArn,
  memoryLimitInMB: String(fn.memoryMb),
  awsRequestId: requestId,
  logGroupName: `/aws/lambda/${fn.name}`,
  logStreamName: logStreamName(),
  getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  done: callbackStyleUnsupported,
  fail: callbackStyleUnsupported,
  succeed: callbackStyleUnsupported,
});

/**
 * The error document of a thrown value, as the Node.js runtime writes it. Lambda reports
 * `errorType` from the error's `name`, which is how Step Functions Catch and Retry match it.
 *
 * @example
 * functionErrorOf(new LeaseLost('…')).errorType // 'LeaseLost'
 */
export const functionErrorOf = (thrown: unknown): FunctionErrorPayload => {
  if (thrown instanceof Error) {
    return { errorType: thrown.name, errorMessage: thrown.message, trace: (thrown.stack ?? '').split('\n') };
  }
  return { errorType: 'Error', errorMessage: String(thrown), trace: [] };
};

/**
 * Lambda's payload limits, as the Invoke API applies them: a synchronous (`RequestResponse`)
 * request may be 6 MB (6,291,456 bytes) and an asynchronous (`Event`) one 1 MB; a synchronous
 * response may be 6,291,556 bytes, the figure Lambda's own error message names.
 */
export const PAYLOAD_LIMITS = {
  RequestResponse: 6_291_456,
  Event: 1_048_576,
  response: 6_291_556,
} as const;

/** The invocation types with a payload limit of their own. */
export type InvocationType = 'RequestResponse' | 'Event';

/**
 * The Invoke API's refusal of a request payload over its invocation type's limit, in Lambda's
 * words (the SDK raises it as `RequestEntityTooLargeException`, HTTP 413); `undefined` when it fits.
 *
 * @example
 * requestTooLarge(7_000_000, 'RequestResponse') // '7000000 byte payload is too large for the RequestResponse invocation type (limit 6291456 bytes)'
 */
export const requestTooLarge = (bytes: number, invocationType: InvocationType): string | undefined =>
  bytes > PAYLOAD_LIMITS[invocationType]
    ? `${bytes} byte payload is too large for the ${invocationType} invocation type (limit ${PAYLOAD_LIMITS[invocationType]} bytes)`
    : undefined;

/**
 * Lambda's answer to a synchronous invocation whose result is over the response limit: the
 * function ran, but its caller gets this function error instead of the result (API Gateway then
 * answers 500, a Step Functions Task fails with `Function.ResponseSizeTooLarge`).
 */
const responseTooLarge = (): FunctionErrorPayload => ({
  errorType: 'Function.ResponseSizeTooLarge',
  errorMessage: `Response payload size exceeded maximum allowed payload size (${PAYLOAD_LIMITS.response} bytes).`,
});

/** The outcome as the caller of a synchronous invocation gets it: a result over the limit is an error. */
const withinResponseLimit = (outcome: InvocationOutcome): InvocationOutcome => {
  if (!outcome.ok) return outcome;
  const bytes = Buffer.byteLength(JSON.stringify(outcome.result ?? null));
  return bytes > PAYLOAD_LIMITS.response ? { ok: false, error: responseTooLarge() } : outcome;
};

const timedOut = (fn: LocalFunction, requestId: string): FunctionErrorPayload => ({
  errorType: 'Sandbox.Timedout',
  errorMessage: `RequestId: ${requestId} Error: Task timed out after ${fn.timeoutSeconds.toFixed(2)} seconds`,
});

/**
 * Invokes a built handler once with a Lambda context and enforces the function's timeout: after
 * `Timeout` seconds the invocation fails with `Sandbox.Timedout`, as Lambda reports it. The
 * handler's promise cannot be killed in-process, so its late result is discarded. A synchronous
 * invocation (the default) whose result is larger than Lambda's response limit fails with
 * `Function.ResponseSizeTooLarge`, as on AWS; an `Event` invocation's result goes nowhere, so it
 * has no limit.
 *
 * @example
 * const outcome = await invokeFunction(fn, { hello: 'world' });
 * if (!outcome.ok) console.log(outcome.error.errorType);
 */
export const invokeFunction = async (
  fn: RunnableFunction,
  event: unknown,
  options: { requestId?: string; invokedFunctionArn?: string; invocationType?: InvocationType } = {},
): Promise<InvocationOutcome> => {
  const requestId = options.requestId ?? randomUUID();
  if (!fn.handler) {
    return {
      ok: false,
      error: { errorType: 'Runtime.HandlerNotFound', errorMessage: `function ${fn.name} has no ${HANDLER_METADATA_KEY} metadata, so it cannot run locally` },
    };
  }
  const timeoutMs = fn.timeoutSeconds * 1000;
  const context = lambdaContext(fn, requestId, options.invokedFunctionArn ?? fn.arn, Date.now() + timeoutMs);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<InvocationOutcome>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, error: timedOut(fn, requestId) }), timeoutMs);
  });
  const run = Promise.resolve()
    .then(() => (fn.handler as LambdaHandler)(event, context))
    .then(
      (result): InvocationOutcome => ({ ok: true, result }),
      (error: unknown): InvocationOutcome => ({ ok: false, error: functionErrorOf(error) }),
    );
  try {
    const outcome = await Promise.race([run, deadline]);
    return (options.invocationType ?? 'RequestResponse') === 'Event' ? outcome : withinResponseLimit(outcome);
  } finally {
    clearTimeout(timer);
  }
};
