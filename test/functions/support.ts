/**
 * Shared setup of the handler tests. Every handler is built with `createHandler(deps)` over real
 * data planes: the ledger on this file's own DynamoDB Local table, the subtask queues on this
 * file's own fauxqs queues, the reference worker registry and the offline model. The only test
 * double is `recordingExecutions`, standing in for Step Functions (the e2e suite runs the real
 * state machine): it records which executions were started and which task tokens answered.
 */
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand, type Message } from '@aws-sdk/client-sqs';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2WithJWTAuthorizer, APIGatewayProxyResultV2, SQSEvent, SQSRecord } from 'aws-lambda';
import { beforeAll } from 'vitest';
import { z } from 'zod';
import { createHandler as createApiHandler } from '../../functions/api';
import { createHandler as createDeadlineHandler } from '../../functions/deadline';
import { createHandler as createDispatchHandler } from '../../functions/dispatch';
import { createHandler as createReconcileHandler } from '../../functions/reconcile';
import { createHandler as createWorkerHandler } from '../../functions/worker';
import { ErrorBody, RunAccepted, type RunRequestInput } from '../../lib/contract';
import { createLedger, ledgerTableDefinition, type Ledger } from '../../lib/ledger';
import type { RunExecutions } from '../../lib/orchestration/run-execution';
import { SubtaskMessage } from '../../lib/queue/message';
import { createRedelivery } from '../../lib/queue/redelivery';
import { createSubtaskQueue } from '../../lib/queue/subtask-queue';
import { createLogger, createMetrics } from '../../lib/runtime/lambda';
import { createModelProvider, parseModelConfig } from '../../lib/workers';
import { referenceRegistry } from '../../examples/app';
import { createTable, documentClient, dynamoClient, localRegion, sqsClient, uniqueName } from '../support/aws';

// Metrics are asserted nowhere here; disabled, Powertools keeps them off stdout.
process.env.POWERTOOLS_METRICS_DISABLED = 'true';

/**
 * Where every clock starts. In 2040 on purpose: DynamoDB Local's TTL sweeper deletes by the wall
 * clock, so idempotency records stamped by a clock in the past could vanish mid-test.
 */
export const T0 = '2040-06-01T12:00:00.000Z';

/** `T0` plus `ms`, as the ISO instant the ledger writes. */
export const at = (ms: number): string => new Date(Date.parse(T0) + ms).toISOString();

/** A clock the test moves by hand, shared by the ledger and the handlers, so deadlines pass without sleeping. */
export interface ManualClock {
  readonly now: () => number;
  /** Moves the clock to `T0 + ms`. */
  readonly moveTo: (ms: number) => void;
}

const manualClock = (): ManualClock => {
  let offset = 0;
  return {
    now: () => Date.parse(T0) + offset,
    moveTo: (ms) => {
      offset = ms;
    },
  };
};

/** What the Step Functions double saw. */
export interface ExecutionCalls {
  readonly start: { runId: string; tenantId: string }[];
  readonly release: { taskToken: string; output: Record<string, unknown> }[];
  readonly fail: { taskToken: string; error: string; cause: string }[];
}

/**
 * The one test double: a `RunExecutions` that records its calls and always reaches its waiter.
 *
 * @example
 * const { executions, calls } = recordingExecutions();
 * await createHandler({ ...deps, executions })(event);
 * calls.start; // [{ runId, tenantId }]
 */
export const recordingExecutions = (): { executions: RunExecutions; calls: ExecutionCalls } => {
  const calls: ExecutionCalls = { start: [], release: [], fail: [] };
  const executions: RunExecutions = {
    start: async (run) => {
      const alreadyStarted = calls.start.some((earlier) => earlier.runId === run.runId);
      calls.start.push({ runId: run.runId, tenantId: run.tenantId });
      return { alreadyStarted };
    },
    release: async (taskToken, output) => {
      calls.release.push({ taskToken, output });
      return { delivered: true };
    },
    fail: async (taskToken, error, cause) => {
      calls.fail.push({ taskToken, error, cause });
      return { delivered: true };
    },
  };
  return { executions, calls };
};

const quietLogger = (component: string) => createLogger(component, { POWERTOOLS_LOG_LEVEL: 'ERROR' });

/** The worker kinds this file deploys a queue for, as the construct does (one queue per kind). */
const KINDS = ['tax-statements', 'transaction-feed'] as const;
type Kind = (typeof KINDS)[number];

interface KindQueue {
  readonly url: string;
  readonly arn: string;
}

const createKindQueue = async (prefix: string, kind: Kind): Promise<KindQueue> => {
  const client = sqsClient();
  const url = (await client.send(new CreateQueueCommand({ QueueName: uniqueName(`${prefix}-${kind}`) }))).QueueUrl;
  if (url === undefined) throw new Error(`fauxqs returned no URL for the ${kind} queue`);
  const attributes = await client.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
  return { url, arn: attributes.Attributes?.QueueArn ?? `arn:aws:sqs:${localRegion}:000000000000:${kind}` };
};

/** The five handlers of one file, wired to one table, one set of queues and one clock. */
export interface Pipeline {
  readonly clock: ManualClock;
  readonly calls: ExecutionCalls;
  readonly ledger: Ledger;
  readonly tableName: string;
  readonly queues: Readonly<Record<Kind, KindQueue>>;
  readonly api: ReturnType<typeof createApiHandler>;
  readonly dispatch: ReturnType<typeof createDispatchHandler>;
  readonly deadline: ReturnType<typeof createDeadlineHandler>;
  readonly worker: ReturnType<typeof createWorkerHandler>;
  readonly reconcile: ReturnType<typeof createReconcileHandler>;
  /** Run ids the API was handed by `newRunId`, in order. */
  readonly issuedRunIds: string[];
  /** The api handler's logger (quiet by default), for tests of what it logs. */
  readonly apiLogger: ReturnType<typeof quietLogger>;
}

const build = async (prefix: string): Promise<Pipeline> => {
  const tableName = uniqueName(prefix);
  await createTable(dynamoClient(), ledgerTableDefinition(tableName));
  const [tax, feed] = await Promise.all(KINDS.map((kind) => createKindQueue(prefix, kind)));
  if (!tax || !feed) throw new Error('both queues are created');
  const queues = { 'tax-statements': tax, 'transaction-feed': feed };
  // Dispatch enqueues rounds on these, the deadline function a hedged subtask's copies.
  const kindQueues = createSubtaskQueue({ client: sqsClient(), queueUrls: { 'tax-statements': tax.url, 'transaction-feed': feed.url } });
  const clock = manualClock();
  const ledger = createLedger({ client: documentClient(), tableName, now: clock.now });
  const { executions, calls } = recordingExecutions();
  const catalog = referenceRegistry.catalog();
  const issuedRunIds: string[] = [];
  const apiLogger = quietLogger('api');
  return {
    apiLogger,
    clock,
    calls,
    ledger,
    tableName,
    queues,
    issuedRunIds,
    api: createApiHandler({
      ledger,
      executions,
      catalog,
      maxDeadlineSeconds: 900,
      tenantClaim: 'custom:tenant',
      newRunId: () => {
        const runId = uniqueName('run');
        issuedRunIds.push(runId);
        return runId;
      },
      logger: apiLogger,
    }),
    dispatch: createDispatchHandler({
      ledger,
      queue: kindQueues,
      catalog,
      sources: referenceRegistry.sources(),
      maxDeadlineSeconds: 900,
      now: clock.now,
      logger: quietLogger('dispatch'),
    }),
    deadline: createDeadlineHandler({ ledger, executions, queue: kindQueues, now: clock.now, logger: quietLogger('deadline') }),
    worker: createWorkerHandler({
      now: clock.now,
      ledger,
      redelivery: createRedelivery({ client: sqsClient() }),
      executions,
      registry: referenceRegistry,
      models: createModelProvider({ config: parseModelConfig({}) }),
      leaseMs: 60_000,
      maxReceiveCount: 3,
      logger: quietLogger('worker'),
      metrics: createMetrics({}),
    }),
    reconcile: createReconcileHandler({
      ledger,
      registry: referenceRegistry,
      sources: referenceRegistry.sources(),
      logger: quietLogger('reconcile'),
      metrics: createMetrics({}),
    }),
  };
};

/**
 * This file's pipeline, built once in `beforeAll` on its own table and queues.
 *
 * @example
 * const p = pipeline('fn-worker');
 * it('…', async () => { await p.get().api(apiEvent({ … })); });
 */
export const pipeline = (prefix: string): { get(): Pipeline } => {
  let built: Pipeline | undefined;
  beforeAll(async () => {
    built = await build(prefix);
  });
  return {
    get: () => {
      if (built === undefined) throw new Error('the pipeline is built in beforeAll');
      return built;
    },
  };
};

// ---------------------------------------------------------------- requests

const QUARTER_TERMS = { worker: 'tax-statements', required: true, justification: 'the total needs every quarter', deadlineSeconds: 60 } as const;

/**
 * The tax example's tax request cut to its first half year: A reviews Q1, B reviews Q2. `bStart` moves
 * B's start (the tax example's typo wrote March through June: `'2025-03-01'`).
 */
export const halfYearRequest = (overrides: Partial<RunRequestInput> = {}, bStart = '2025-04-01'): RunRequestInput => ({
  goal: 'Total deductible household expenses for the first half of 2025',
  universe: { dimension: 'time', from: '2025-01-01', toExclusive: '2025-07-01' },
  subtasks: [
    { ...QUARTER_TERMS, id: 'A', questionIds: ['q1'], scope: { from: '2025-01-01', toExclusive: '2025-04-01' }, budget: { modelCalls: 4, estimatedCostPerCall: 7 } },
    { ...QUARTER_TERMS, id: 'B', questionIds: ['q2'], scope: { from: bStart, toExclusive: '2025-07-01' }, budget: { modelCalls: 4, estimatedCostPerCall: 7 } },
  ],
  policy: { maxRounds: 2 },
  budget: { modelCalls: 40, costLimit: 500 },
  ...overrides,
});

/** Only Q2, one subtask B: the cheapest run whose worker meets June's early statement close. */
export const secondQuarterRequest = (): RunRequestInput => ({
  goal: 'Total deductible household expenses for Q2 2025',
  universe: { dimension: 'time', from: '2025-04-01', toExclusive: '2025-07-01' },
  subtasks: [{ ...QUARTER_TERMS, id: 'B', questionIds: ['q2'], scope: { from: '2025-04-01', toExclusive: '2025-07-01' }, budget: { modelCalls: 4, estimatedCostPerCall: 7 } }],
  policy: { maxRounds: 1 },
  budget: { modelCalls: 40, costLimit: 500 },
});

// ---------------------------------------------------------------- API Gateway events

/** How a test calls the API: route, caller and request. */
export interface ApiCall {
  /** The route as declared, `METHOD /path`: `POST /runs`, `GET /runs/{runId}`, `POST /runs/{runId}/cancel`. */
  readonly routeKey: string;
  /** The `custom:tenant` claim as the authorizer delivers it (a string); `null` for a token without it. */
  readonly tenant: string | null;
  /** The claim's JSON value in the token itself, when it is not `tenant` (API Gateway turns `123` into `"123"`). */
  readonly tokenTenant?: unknown;
  readonly runId?: string;
  readonly body?: string;
  readonly idempotencyKey?: string;
}

let requestCounter = 0;

const base64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * A JWT whose payload is `claims`. Unsigned: the handler runs behind API Gateway's authorizer,
 * which verified the signature; the handler reads the token only for its claims' JSON types.
 */
export const tokenWith = (claims: Record<string, unknown>): string => `${base64url({ alg: 'RS256', typ: 'JWT' })}.${base64url(claims)}.c2lnbmF0dXJl`;

/**
 * The payload-format-2.0 event API Gateway's HTTP API sends after its JWT authorizer accepted the
 * token: the token in the authorization header, its claims as strings, header names lower-cased,
 * path parameters from the route.
 *
 * @example
 * apiEvent({ routeKey: 'GET /runs/{runId}', tenant: 'acme', runId }).pathParameters; // { runId }
 */
export const apiEvent = (call: ApiCall): APIGatewayProxyEventV2WithJWTAuthorizer => {
  const [method = 'GET', route = '/'] = call.routeKey.split(' ');
  const path = call.runId === undefined ? route : route.replace('{runId}', call.runId);
  requestCounter += 1;
  const requestId = `req-${requestCounter}`;
  const claims: Record<string, string> = { sub: 'user-1', iss: 'https://issuer.example', ...(call.tenant === null ? {} : { 'custom:tenant': call.tenant }) };
  const tokenTenant = 'tokenTenant' in call ? call.tokenTenant : (call.tenant ?? undefined);
  const token = tokenWith({ sub: 'user-1', iss: 'https://issuer.example', ...(tokenTenant === undefined ? {} : { 'custom:tenant': tokenTenant }) });
  return {
    version: '2.0',
    routeKey: call.routeKey,
    rawPath: path,
    rawQueryString: '',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      host: 'api.example',
      ...(call.idempotencyKey === undefined ? {} : { 'idempotency-key': call.idempotencyKey }),
    },
    requestContext: {
      accountId: '123456789012',
      apiId: 'api1',
      authorizer: { principalId: '', integrationLatency: 0, jwt: { claims, scopes: null } },
      domainName: 'api.example',
      domainPrefix: 'api',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'vitest' },
      requestId,
      routeKey: call.routeKey,
      stage: '$default',
      time: '01/Jun/2040:12:00:00 +0000',
      timeEpoch: Date.parse(T0),
    },
    ...(call.runId === undefined ? {} : { pathParameters: { runId: call.runId } }),
    ...(call.body === undefined ? {} : { body: call.body }),
    isBase64Encoded: false,
  };
};

const StructuredResult = z.object({ statusCode: z.number(), headers: z.record(z.string(), z.string()).optional(), body: z.string() });

/** A handler's answer with its JSON body parsed (still `unknown`: tests parse it with contract schemas). */
export interface ApiAnswer {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  readonly body: unknown;
}

export const answerOf = (result: APIGatewayProxyResultV2): ApiAnswer => {
  const structured = StructuredResult.parse(result);
  const body: unknown = JSON.parse(structured.body);
  return { statusCode: structured.statusCode, headers: structured.headers ?? {}, body };
};

/** The `error` of an error answer. */
export const errorOf = (answer: ApiAnswer) => ErrorBody.parse(answer.body).error;

/** Calls the API handler and parses its answer. */
export const callApi = async (p: Pipeline, call: ApiCall): Promise<ApiAnswer> => answerOf(await p.api(apiEvent(call)));

/**
 * `POST /runs` that must be accepted; returns the run id.
 *
 * @example
 * const runId = await acceptRun(p.get(), 'acme', halfYearRequest());
 */
export const acceptRun = async (p: Pipeline, tenant: string, request: RunRequestInput): Promise<string> => {
  const answer = await callApi(p, { routeKey: 'POST /runs', tenant, body: JSON.stringify(request) });
  if (answer.statusCode !== 202) throw new Error(`POST /runs answered ${answer.statusCode}: ${JSON.stringify(answer.body)}`);
  return RunAccepted.parse(answer.body).runId;
};

// ---------------------------------------------------------------- Step Functions task outputs

const Item = z.object({ runId: z.string(), tenantId: z.string(), subtaskId: z.string(), deadline: z.string() });
const DispatchOutput = z.object({ runId: z.string(), tenantId: z.string(), round: z.int(), items: z.array(Item) });
export type DispatchOutput = z.infer<typeof DispatchOutput>;

/** Runs the Dispatch task as the state machine would, and parses its output. */
export const dispatchRound = async (p: Pipeline, tenantId: string, runId: string, round = 1): Promise<DispatchOutput> =>
  DispatchOutput.parse(await p.dispatch({ runId, tenantId, round }));

// ---------------------------------------------------------------- SQS

/** Every visible message on a queue, with the system attributes Lambda's event source asks for. */
export const receiveAll = async (url: string): Promise<Message[]> => {
  const client = sqsClient();
  const messages: Message[] = [];
  for (;;) {
    const page = await client.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, MessageSystemAttributeNames: ['All'] }));
    if (!page.Messages?.length) return messages;
    messages.push(...page.Messages);
  }
};

/** Puts a message with any body on a kind's queue, as a misbehaving producer would. */
export const sendRaw = async (p: Pipeline, kind: Kind, body: string): Promise<void> => {
  await sqsClient().send(new SendMessageCommand({ QueueUrl: p.queues[kind].url, MessageBody: body }));
};

/** The subtask a message body names, or `undefined` for a body that is not a subtask message. */
const readBody = (body: string | undefined): SubtaskMessage | undefined => {
  try {
    return SubtaskMessage.safeParse(JSON.parse(body ?? '')).data;
  } catch {
    return undefined;
  }
};

/** The queue's messages for one run (messages earlier tests left behind are ignored). */
export const messagesOfRun = async (p: Pipeline, kind: Kind, runId: string): Promise<Message[]> =>
  (await receiveAll(p.queues[kind].url)).filter((message) => readBody(message.Body)?.runId === runId);

/** The subtask a message names. */
export const subtaskOf = (message: Message): SubtaskMessage => {
  const parsed = readBody(message.Body);
  if (parsed === undefined) throw new Error(`message ${message.MessageId ?? '?'} is not a subtask message`);
  return parsed;
};

/** What the event source needs of a received message; the emulator must supply all of it. */
const ReceivedMessage = z.object({
  MessageId: z.string(),
  ReceiptHandle: z.string(),
  Body: z.string(),
  MD5OfBody: z.string(),
  Attributes: z.object({ ApproximateReceiveCount: z.string(), SentTimestamp: z.string(), SenderId: z.string(), ApproximateFirstReceiveTimestamp: z.string() }),
});

/**
 * One record as Lambda's SQS event source builds it from a received message.
 *
 * @example
 * await deliver(p, (await messagesOfRun(p, 'tax-statements', runId)).map((m) => sqsRecord(p, 'tax-statements', m)));
 */
export const sqsRecord = (p: Pipeline, kind: Kind, message: Message): SQSRecord => {
  const received = ReceivedMessage.parse(message);
  return {
    messageId: received.MessageId,
    receiptHandle: received.ReceiptHandle,
    body: received.Body,
    attributes: received.Attributes,
    messageAttributes: {},
    md5OfBody: received.MD5OfBody,
    eventSource: 'aws:sqs',
    eventSourceARN: p.queues[kind].arn,
    awsRegion: localRegion,
  };
};

/** Delivers records to the worker handler, as one invocation. */
export const deliver = (p: Pipeline, records: readonly SQSRecord[]) => p.worker({ Records: [...records] } satisfies SQSEvent, { awsRequestId: uniqueName('invocation') });

/**
 * Receives this run's messages of one kind (optionally only some subtasks) and delivers them as one batch.
 *
 * @example
 * expect(await deliverRun(p, 'tax-statements', runId, ['A'])).toEqual({ batchItemFailures: [] });
 */
export const deliverRun = async (p: Pipeline, kind: Kind, runId: string, subtaskIds?: readonly string[]) => {
  const messages = (await messagesOfRun(p, kind, runId)).filter((m) => subtaskIds === undefined || subtaskIds.includes(subtaskOf(m).subtaskId));
  if (messages.length === 0) throw new Error(`no ${kind} message for run ${runId}`);
  return deliver(p, messages.map((message) => sqsRecord(p, kind, message)));
};

// ---------------------------------------------------------------- the table itself

/**
 * Every item whose key belongs to a tenant, read straight from the table. Used only to prove that
 * nothing at all was written, which no ledger read can show.
 */
export const itemsOfTenant = async (p: Pipeline, tenantId: string): Promise<Record<string, unknown>[]> => {
  const output = await documentClient().send(
    new ScanCommand({ TableName: p.tableName, FilterExpression: 'begins_with(pk, :prefix)', ExpressionAttributeValues: { ':prefix': `T#${encodeURIComponent(tenantId)}#` }, ConsistentRead: true }),
  );
  return output.Items ?? [];
};
