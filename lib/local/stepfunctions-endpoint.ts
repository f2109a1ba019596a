import { z } from 'zod';
import { StatesApiError } from './errors';
import { jsonReply, listenOnLoopback, type HttpReply } from './http-server';
import { silentLog, type LocalLog } from './log';
import { ExecutionStatus, type ExecutionRecord, type ExecutionService } from './sfn-executions';

/**
 * A local Step Functions endpoint speaking the service's JSON protocol
 * (`X-Amz-Target: AWSStepFunctions.<Operation>`, `application/x-amz-json-1.0`), so handlers use
 * the real `@aws-sdk/client-sfn` against it through `AWS_ENDPOINT_URL_SFN`.
 */

const CONTENT_TYPE = 'application/x-amz-json-1.0';
const TARGET_PREFIX = 'AWSStepFunctions.';

/** The JSON protocol writes timestamps as epoch seconds. */
const epochSeconds = (date: Date | undefined): number | undefined => (date === undefined ? undefined : date.getTime() / 1000);

const summary = (record: ExecutionRecord) => ({
  executionArn: record.executionArn,
  stateMachineArn: record.stateMachineArn,
  name: record.name,
  status: record.status,
  startDate: epochSeconds(record.startDate),
  stopDate: epochSeconds(record.stopDate),
});

const description = (record: ExecutionRecord) => ({
  ...summary(record),
  input: record.input,
  inputDetails: { included: true },
  ...(record.output === undefined ? {} : { output: record.output, outputDetails: { included: true } }),
  ...(record.error === undefined ? {} : { error: record.error }),
  ...(record.cause === undefined ? {} : { cause: record.cause }),
});

const operations = (service: ExecutionService) => {
  const operation = <S extends z.ZodType, R>(schema: S, handle: (input: z.infer<S>) => R) => ({ schema, handle });
  return {
    StartExecution: operation(z.looseObject({ stateMachineArn: z.string(), name: z.string().optional(), input: z.string().optional() }), (input) => {
      const record = service.start(input);
      return { executionArn: record.executionArn, startDate: epochSeconds(record.startDate) };
    }),
    DescribeExecution: operation(z.looseObject({ executionArn: z.string() }), (input) => description(service.describe(input.executionArn))),
    StopExecution: operation(z.looseObject({ executionArn: z.string(), error: z.string().optional(), cause: z.string().optional() }), (input) => {
      service.stop(input);
      return { stopDate: Date.now() / 1000 };
    }),
    ListExecutions: operation(
      z.looseObject({
        stateMachineArn: z.string(),
        statusFilter: ExecutionStatus.optional(),
        maxResults: z.number().int().min(0).max(1000).optional(),
        nextToken: z.string().optional(),
      }),
      (input) => {
        const all = service.list(input);
        const offset = input.nextToken === undefined ? 0 : Number(input.nextToken);
        const size = input.maxResults || 100;
        const page = all.slice(offset, offset + size);
        return { executions: page.map(summary), ...(offset + size < all.length ? { nextToken: String(offset + size) } : {}) };
      },
    ),
    SendTaskSuccess: operation(z.looseObject({ taskToken: z.string(), output: z.string() }), (input) => {
      service.sendTaskSuccess(input.taskToken, input.output);
      return {};
    }),
    SendTaskFailure: operation(z.looseObject({ taskToken: z.string(), error: z.string().optional(), cause: z.string().optional() }), (input) => {
      service.sendTaskFailure(input.taskToken, input.error, input.cause);
      return {};
    }),
    SendTaskHeartbeat: operation(z.looseObject({ taskToken: z.string() }), (input) => {
      service.sendTaskHeartbeat(input.taskToken);
      return {};
    }),
  } as const;
};

const apiError = (code: string, message: string): HttpReply => jsonReply(400, { __type: code, message }, { 'x-amzn-errortype': code }, CONTENT_TYPE);

const parseBody = (body: Buffer): unknown => {
  try {
    const value: unknown = JSON.parse(body.length === 0 ? '{}' : body.toString('utf8'));
    return value;
  } catch {
    return undefined;
  }
};

/** The running endpoint. */
export interface StepFunctionsEndpoint {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * Serves an execution service on 127.0.0.1.
 *
 * @example
 * const sfn = await startStepFunctionsEndpoint({ service });
 * await new SFNClient({ endpoint: sfn.url }).send(new StartExecutionCommand({ stateMachineArn, name: runId }));
 */
export const startStepFunctionsEndpoint = async (options: { service: ExecutionService; port?: number; log?: LocalLog }): Promise<StepFunctionsEndpoint> => {
  const log = options.log ?? silentLog;
  const table = operations(options.service);
  const server = await listenOnLoopback(
    async (request, body) => {
      const target = String(request.headers['x-amz-target'] ?? '');
      const name = target.startsWith(TARGET_PREFIX) ? target.slice(TARGET_PREFIX.length) : '';
      const op = Object.hasOwn(table, name) ? table[name as keyof typeof table] : undefined;
      if (request.method !== 'POST' || !op)
        return apiError('UnknownOperationException', `The local Step Functions endpoint does not implement ${target || 'this request'}`);
      const input = op.schema.safeParse(parseBody(body));
      if (!input.success) return apiError('ValidationException', z.prettifyError(input.error));
      try {
        return jsonReply(200, (op.handle as (value: unknown) => unknown)(input.data), {}, CONTENT_TYPE);
      } catch (error) {
        if (error instanceof StatesApiError) return apiError(error.code, error.message);
        throw error;
      }
    },
    { ...(options.port === undefined ? {} : { port: options.port }), onError: (error) => log({ level: 'error', component: 'states', message: String(error) }) },
  );
  return { url: server.url, port: server.port, stop: () => server.close() };
};
