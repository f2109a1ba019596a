import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { jsonReply, listenOnLoopback, type HttpReply, type LoopbackServer } from './http-server';
import {
  findFunction,
  invokeFunction,
  requestTooLarge,
  type FunctionErrorPayload,
  type InvocationOutcome,
  type InvocationType,
  type RunnableFunction,
} from './lambda-runtime';
import { silentLog, type LocalLog } from './log';
import { tracePhase } from './startup-trace';

/**
 * A local Lambda Invoke API (`POST /2015-03-31/functions/{FunctionName}/invocations`) that routes
 * function names and ARNs to the handlers built from the template. It also answers the Step
 * Functions optimized integration, which aws-local-stepfunctions sends here literally as the
 * function `arn:aws:states:::lambda:invoke` with the Task's effective input `{ FunctionName, Payload }`.
 */

/**
 * The Task resource of Step Functions' optimized Lambda integration, which the endpoint unwraps.
 *
 * @example
 * await lambda.send(new InvokeCommand({ FunctionName: LAMBDA_INVOKE_INTEGRATION, Payload: encode({ FunctionName: arn, Payload: {} }) }));
 */
export const LAMBDA_INVOKE_INTEGRATION = 'arn:aws:states:::lambda:invoke';

const INVOKE_PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;

/** Invocation counts per function name, for progress output and benchmarks. */
export interface InvocationStats {
  readonly invocations: number;
  readonly errors: number;
}

/** The running endpoint. */
export interface LambdaEndpoint {
  readonly url: string;
  readonly port: number;
  /** Invocations so far, by function name (calls through the optimized integration count for the function). */
  stats(): Readonly<Record<string, InvocationStats>>;
  stop(): Promise<void>;
}

const serviceError = (status: number, code: string, message: string): HttpReply => jsonReply(status, { Type: 'User', message }, { 'x-amzn-errortype': code });

const functionErrorReply = (error: FunctionErrorPayload): HttpReply =>
  jsonReply(200, error, { 'x-amz-function-error': 'Unhandled', 'x-amz-executed-version': '$LATEST' });

/** Lambda hands an empty request body to the function as an empty object. */
const parsePayload = (body: Buffer): { ok: true; value: unknown } | { ok: false } => {
  if (body.length === 0) return { ok: true, value: {} };
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return { ok: true, value };
  } catch {
    return { ok: false };
  }
};

const IntegrationInput = z.looseObject({
  FunctionName: z.string().min(1),
  Payload: z.unknown().optional(),
  InvocationType: z.enum(['RequestResponse', 'Event']).optional(),
  Qualifier: z.string().optional(),
});

/** What the optimized integration returns as the Task result, `Payload` being the function's result. */
const integrationResult = (statusCode: number, payload: unknown, requestId: string) => ({
  ExecutedVersion: '$LATEST',
  Payload: payload,
  SdkHttpMetadata: { HttpHeaders: { 'Content-Type': 'application/json', 'X-Amz-Executed-Version': '$LATEST' }, HttpStatusCode: statusCode },
  SdkResponseMetadata: { RequestId: requestId },
  StatusCode: statusCode,
});

/**
 * Starts the endpoint on 127.0.0.1.
 *
 * @example
 * const lambda = await startLambdaEndpoint({ functions });
 * process.env.AWS_ENDPOINT_URL_LAMBDA = lambda.url;
 */
export const startLambdaEndpoint = async (options: { functions: readonly RunnableFunction[]; port?: number; log?: LocalLog }): Promise<LambdaEndpoint> => {
  const log = options.log ?? silentLog;
  const stats = new Map<string, { invocations: number; errors: number }>();

  const run = async (
    fn: RunnableFunction,
    event: unknown,
    requestId: string,
    invocationType: InvocationType,
    invokedFunctionArn?: string,
  ): Promise<InvocationOutcome> => {
    const entry = stats.get(fn.name) ?? { invocations: 0, errors: 0 };
    stats.set(fn.name, entry);
    entry.invocations += 1;
    const outcome = await tracePhase(`lambda.invoke ${fn.entry ?? fn.logicalId}`, () =>
      invokeFunction(fn, event, { requestId, invocationType, ...(invokedFunctionArn ? { invokedFunctionArn } : {}) }),
    );
    if (!outcome.ok) {
      entry.errors += 1;
      log({ level: 'warn', component: 'lambda', message: `${fn.name} failed: ${outcome.error.errorType}: ${outcome.error.errorMessage}`, data: { requestId } });
    }
    return outcome;
  };

  /** Event invocations are acknowledged at once; Lambda's async retries are not emulated. */
  const runInBackground = (fn: RunnableFunction, event: unknown, requestId: string): void => {
    void run(fn, event, requestId, 'Event');
  };

  /** Lambda refuses a payload over its invocation type's limit before running anything (HTTP 413). */
  const tooLarge = (bytes: number, invocationType: InvocationType): HttpReply | undefined => {
    const refusal = requestTooLarge(bytes, invocationType);
    return refusal === undefined ? undefined : serviceError(413, 'RequestEntityTooLargeException', refusal);
  };

  const invokeDirect = async (name: string, request: IncomingMessage, payload: unknown, bytes: number, requestId: string): Promise<HttpReply> => {
    const url = new URL(request.url ?? '/', 'http://local');
    const fn = findFunction(options.functions, name, url.searchParams.get('Qualifier') ?? undefined);
    if (!fn) return serviceError(404, 'ResourceNotFoundException', `Function not found: ${name}`);
    const invocationType = String(request.headers['x-amz-invocation-type'] ?? 'RequestResponse');
    if (invocationType === 'DryRun') return { status: 204 };
    if (invocationType === 'Event') {
      const refused = tooLarge(bytes, 'Event');
      if (refused) return refused;
      runInBackground(fn, payload, requestId);
      return { status: 202, headers: { 'x-amzn-requestid': requestId } };
    }
    if (invocationType !== 'RequestResponse') return serviceError(400, 'InvalidParameterValueException', `Unknown invocation type ${invocationType}`);
    const refused = tooLarge(bytes, 'RequestResponse');
    if (refused) return refused;
    const outcome = await run(fn, payload, requestId, 'RequestResponse', name.startsWith('arn:') ? name : undefined);
    if (!outcome.ok) return functionErrorReply(outcome.error);
    return jsonReply(200, outcome.result ?? null, { 'x-amz-executed-version': '$LATEST', 'x-amzn-requestid': requestId });
  };

  /**
   * Step Functions reports a missing function as the Task error `Lambda.ResourceNotFoundException`;
   * answering with a function error of that type makes aws-local-stepfunctions raise exactly that name.
   */
  const invokeIntegration = async (payload: unknown, requestId: string): Promise<HttpReply> => {
    const input = IntegrationInput.safeParse(payload);
    if (!input.success)
      return functionErrorReply({ errorType: 'States.Runtime', errorMessage: `lambda:invoke parameters are invalid: ${z.prettifyError(input.error)}` });
    const fn = findFunction(options.functions, input.data.FunctionName, input.data.Qualifier);
    if (!fn) return functionErrorReply({ errorType: 'Lambda.ResourceNotFoundException', errorMessage: `Function not found: ${input.data.FunctionName}` });
    const event = input.data.Payload === undefined ? {} : input.data.Payload;
    if (input.data.InvocationType === 'Event') {
      runInBackground(fn, event, requestId);
      return jsonReply(200, integrationResult(202, '', requestId));
    }
    const outcome = await run(fn, event, requestId, 'RequestResponse');
    return outcome.ok ? jsonReply(200, integrationResult(200, outcome.result ?? null, requestId)) : functionErrorReply(outcome.error);
  };

  const server: LoopbackServer = await listenOnLoopback(
    async (request, body) => {
      const match = INVOKE_PATH.exec(new URL(request.url ?? '/', 'http://local').pathname);
      if (request.method !== 'POST' || !match) return serviceError(404, 'UnknownOperationException', `Unknown operation ${request.method} ${request.url}`);
      const name = decodeURIComponent(match[1] as string);
      const payload = parsePayload(body);
      if (!payload.ok) return serviceError(400, 'InvalidRequestContentException', 'Could not parse request body into json');
      const requestId = randomUUID();
      if (name === LAMBDA_INVOKE_INTEGRATION) return invokeIntegration(payload.value, requestId);
      if (name.startsWith('arn:aws:states:'))
        return serviceError(400, 'InvalidParameterValueException', `${name} is a Step Functions integration the local cloud does not emulate`);
      return invokeDirect(name, request, payload.value, body.length, requestId);
    },
    { ...(options.port === undefined ? {} : { port: options.port }), onError: (error) => log({ level: 'error', component: 'lambda', message: String(error) }) },
  );

  return {
    url: server.url,
    port: server.port,
    stats: () => Object.fromEntries([...stats].map(([name, entry]) => [name, { ...entry }])),
    stop: () => server.close(),
  };
};
