import { setMaxListeners } from 'node:events';
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  type Message,
  type MessageAttributeValue,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSMessageAttribute, SQSRecord } from 'aws-lambda';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { TemplateResolutionError, UnsupportedFeatureError } from './errors';
import type { InvokeResult, LambdaInvoker } from './lambda-client';
import { recordPhase } from './startup-trace';
import { silentLog, type LocalLog } from './log';
import type { TemplateEntry } from '../template/reader';
import { checkProperties, propertyPath, RESOURCE_TYPES, type TemplateResolver } from './template';

/**
 * Emulates Lambda's SQS event-source mappings: pollers long-poll the queue, build the exact SQS
 * event, invoke the function through the local Lambda endpoint and delete what succeeded. What is
 * not deleted reappears after the visibility timeout, and the emulator's redrive policy moves it to
 * the dead-letter queue after `maxReceiveCount` receives, as in AWS.
 *
 * Received messages are never left behind silently. A batch whose invocation was lost (the invoke
 * request failed or its answer never came back, so the function may not have run at all) goes
 * back to the queue at once with ChangeMessageVisibility 0, where AWS's poller would retry the
 * invocation: waiting out the visibility timeout (six times the function timeout) would strand
 * the subtasks past their deadlines. That is logged at `error`, which `tessera serve` prints
 * without `--verbose`. Messages received while the pollers stop go back the same way. A function
 * error keeps Lambda's rule: the batch returns after the visibility timeout.
 */

/** One SQS event-source mapping of the template, resolved. */
export interface SqsEventSourceMapping {
  readonly logicalId: string;
  readonly functionName: string;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly batchSize: number;
  readonly maximumBatchingWindowSeconds: number;
  /** Batches in flight at once (ScalingConfig.MaximumConcurrency). */
  readonly concurrency: number;
  readonly reportBatchItemFailures: boolean;
  readonly enabled: boolean;
}

/** AWS starts five pollers per SQS mapping; without a MaximumConcurrency that is the local concurrency too. */
const DEFAULT_CONCURRENCY = 5;
/**
 * Idle pollers long-poll for SQS's maximum, 20 s, as Lambda's do: each wakes as soon as a message
 * arrives, and `stop()` aborts the requests in flight. (At 1 s, the 40 pollers of eight mappings
 * sent 40 requests a second, about a quarter of a core on an idle cloud.)
 */
const POLL_WAIT_SECONDS = 20;
const RECEIVE_LIMIT = 10;

const MappingProperties = z.object({
  EventSourceArn: z.string(),
  FunctionName: z.string(),
  BatchSize: z.coerce.number().int().min(1).max(10_000).default(10),
  MaximumBatchingWindowInSeconds: z.coerce.number().int().min(0).max(300).default(0),
  FunctionResponseTypes: z.array(z.literal('ReportBatchItemFailures')).default([]),
  ScalingConfig: z.object({ MaximumConcurrency: z.coerce.number().int().min(2).max(1000).optional() }).optional(),
  Enabled: z.union([z.boolean(), z.enum(['true', 'false'])]).default(true),
});
const MAPPING_PROPERTIES = Object.keys(MappingProperties.shape);
const INERT_MAPPING_PROPERTIES = ['Tags', 'MetricsConfig'];

const describeMapping = (entry: TemplateEntry, resolver: TemplateResolver, queues: ReadonlyMap<string, string>): SqsEventSourceMapping => {
  checkProperties(entry, MAPPING_PROPERTIES, INERT_MAPPING_PROPERTIES);
  const path = propertyPath(entry.logicalId);
  const parsed = MappingProperties.safeParse(resolver.resolve(entry.resource.Properties ?? {}, path));
  if (!parsed.success) throw new TemplateResolutionError(path, z.prettifyError(parsed.error));
  const props = parsed.data;
  const queueUrl = queues.get(props.EventSourceArn);
  if (!queueUrl)
    throw new UnsupportedFeatureError(
      propertyPath(entry.logicalId, 'EventSourceArn'),
      `event source ${props.EventSourceArn} (only this template's SQS queues are emulated)`,
    );
  return {
    logicalId: entry.logicalId,
    functionName: props.FunctionName,
    queueUrl,
    queueArn: props.EventSourceArn,
    batchSize: props.BatchSize,
    maximumBatchingWindowSeconds: props.MaximumBatchingWindowInSeconds,
    concurrency: props.ScalingConfig?.MaximumConcurrency ?? DEFAULT_CONCURRENCY,
    reportBatchItemFailures: props.FunctionResponseTypes.includes('ReportBatchItemFailures'),
    enabled: String(props.Enabled) === 'true',
  };
};

/**
 * The template's event-source mappings. Each must read one of the template's queues.
 *
 * @example
 * const mappings = eventSourceMappingsFromTemplate(resolver, queues);
 */
export const eventSourceMappingsFromTemplate = (
  resolver: TemplateResolver,
  queues: readonly { queueArn: string; queueUrl: string }[],
): SqsEventSourceMapping[] => {
  const byArn = new Map(queues.map((queue) => [queue.queueArn, queue.queueUrl]));
  return resolver.entries(RESOURCE_TYPES.eventSourceMapping).map((entry) => describeMapping(entry, resolver, byArn));
};

const recordAttribute = (value: MessageAttributeValue): SQSMessageAttribute => ({
  ...(value.StringValue === undefined ? {} : { stringValue: value.StringValue }),
  ...(value.BinaryValue === undefined ? {} : { binaryValue: Buffer.from(value.BinaryValue).toString('base64') }),
  stringListValues: value.StringListValues ?? [],
  binaryListValues: (value.BinaryListValues ?? []).map((bytes) => Buffer.from(bytes).toString('base64')),
  dataType: value.DataType ?? 'String',
});

const recordOf = (message: Message, mapping: SqsEventSourceMapping, region: string): SQSRecord => {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ...attributes,
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? '',
      SenderId: attributes.SenderId ?? '',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? '',
    },
    messageAttributes: Object.fromEntries(Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [name, recordAttribute(value)])),
    ...(message.MD5OfMessageAttributes === undefined ? {} : { md5OfMessageAttributes: message.MD5OfMessageAttributes }),
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: mapping.queueArn,
    awsRegion: region,
  };
};

/**
 * The Lambda event for a batch of received messages, exactly as the SQS event source builds it.
 *
 * @example
 * const event = sqsEvent(messages, mapping, 'us-east-1');
 * event.Records[0]?.eventSource; // 'aws:sqs'
 */
export const sqsEvent = (messages: readonly Message[], mapping: SqsEventSourceMapping, region: string): SQSEvent => ({
  Records: messages.map((message) => recordOf(message, mapping, region)),
});

const BatchResponse = z.union([z.null(), z.looseObject({ batchItemFailures: z.array(z.looseObject({ itemIdentifier: z.string().min(1) })).nullish() })]);

/**
 * Which messages of a batch to delete after the invocation, by Lambda's rules:
 * - the function failed: delete none (the batch returns after its visibility timeout);
 * - it succeeded without ReportBatchItemFailures: delete all;
 * - with ReportBatchItemFailures: keep exactly the reported `itemIdentifier`s; an empty or absent
 *   list deletes all; an invalid response (not an object, an empty or unknown identifier) fails
 *   the whole batch.
 *
 * @example
 * settleBatch(['a', 'b'], { ok: true, payload: { batchItemFailures: [{ itemIdentifier: 'b' }] } }, true)
 * // { delete: ['a'], retain: ['b'] }
 */
export const settleBatch = (messageIds: readonly string[], outcome: InvokeResult, reportBatchItemFailures: boolean): { delete: string[]; retain: string[] } => {
  const keepAll = { delete: [], retain: [...messageIds] };
  if (!outcome.ok) return keepAll;
  if (!reportBatchItemFailures) return { delete: [...messageIds], retain: [] };
  const response = BatchResponse.safeParse(outcome.payload ?? null);
  if (!response.success) return keepAll;
  const failed = new Set((response.data?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
  if ([...failed].some((id) => !messageIds.includes(id))) return keepAll;
  return { delete: messageIds.filter((id) => !failed.has(id)), retain: messageIds.filter((id) => failed.has(id)) };
};

/** Running pollers of all mappings. */
export interface EventSourceMappings {
  /** Batches invoked so far, by mapping logical ID. */
  batches(): Readonly<Record<string, number>>;
  /** Stops polling, waits for batches in flight to finish. Safe to call twice. */
  stop(): Promise<void>;
}

interface PollerContext {
  readonly mapping: SqsEventSourceMapping;
  readonly sqs: SQSClient;
  readonly lambda: LambdaInvoker;
  readonly region: string;
  readonly log: LocalLog;
  readonly signal: AbortSignal;
  readonly counted: () => void;
}

const receive = async (ctx: PollerContext, max: number, waitSeconds: number): Promise<Message[]> => {
  const response = await ctx.sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: ctx.mapping.queueUrl,
      MaxNumberOfMessages: Math.min(RECEIVE_LIMIT, max),
      WaitTimeSeconds: waitSeconds,
      MessageSystemAttributeNames: ['All'],
      MessageAttributeNames: ['All'],
    }),
    { abortSignal: ctx.signal },
  );
  return response.Messages ?? [];
};

/**
 * Collects up to BatchSize messages. Without a batching window (0, Lambda's default) the batch is
 * what the first receive returned, invoked at once. With one, it keeps receiving until the batch
 * is full or the window closes. Once a first message is in hand, a failed or aborted receive ends
 * the window: the batch keeps what it has, so no received message is dropped while it sits
 * invisible in flight.
 */
const collectBatch = async (ctx: PollerContext): Promise<Message[]> => {
  const { batchSize, maximumBatchingWindowSeconds } = ctx.mapping;
  const batch = await receive(ctx, batchSize, POLL_WAIT_SECONDS);
  if (batch.length === 0 || maximumBatchingWindowSeconds === 0) return batch;
  const opened = performance.now();
  const closes = Date.now() + maximumBatchingWindowSeconds * 1000;
  try {
    while (batch.length < batchSize && !ctx.signal.aborted) {
      const remainingMs = closes - Date.now();
      // Long-poll for the window's whole seconds left; the last fraction is short polls.
      const more = await receive(ctx, batchSize - batch.length, Math.min(POLL_WAIT_SECONDS, Math.max(0, Math.floor(remainingMs / 1000))));
      batch.push(...more);
      if (more.length === 0 && remainingMs <= 0) break;
      if (more.length === 0 && remainingMs < 1000) await sleep(Math.min(remainingMs, 50));
    }
  } catch (error) {
    if (!ctx.signal.aborted) {
      ctx.log({
        level: 'warn',
        component: 'esm',
        message: `${ctx.mapping.logicalId}: receiving more of a batch failed; invoking with the ${batch.length} in hand: ${(error as Error).message}`,
      });
    }
  }
  recordPhase('sqs.batching-window', opened);
  return batch;
};

/**
 * Makes messages visible again at once (ChangeMessageVisibility 0). Never throws: a message it
 * cannot return is logged, and comes back after its visibility timeout.
 */
const returnToQueue = async (ctx: PollerContext, messages: readonly Message[]): Promise<void> => {
  for (let start = 0; start < messages.length; start += RECEIVE_LIMIT) {
    const entries = messages
      .slice(start, start + RECEIVE_LIMIT)
      .map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle, VisibilityTimeout: 0 }));
    try {
      const result = await ctx.sqs.send(new ChangeMessageVisibilityBatchCommand({ QueueUrl: ctx.mapping.queueUrl, Entries: entries }));
      for (const failure of result.Failed ?? []) {
        ctx.log({
          level: 'error',
          component: 'esm',
          message: `${ctx.mapping.logicalId}: could not return a message to the queue (it comes back after the visibility timeout): ${failure.Message ?? failure.Code}`,
        });
      }
    } catch (error) {
      ctx.log({
        level: 'error',
        component: 'esm',
        message: `${ctx.mapping.logicalId}: could not return ${entries.length} messages to the queue (they come back after the visibility timeout): ${(error as Error).message}`,
      });
    }
  }
};

const deleteMessages = async (ctx: PollerContext, messages: readonly Message[]): Promise<void> => {
  for (let start = 0; start < messages.length; start += RECEIVE_LIMIT) {
    const entries = messages.slice(start, start + RECEIVE_LIMIT).map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle }));
    const result = await ctx.sqs.send(new DeleteMessageBatchCommand({ QueueUrl: ctx.mapping.queueUrl, Entries: entries }));
    for (const failure of result.Failed ?? []) {
      ctx.log({ level: 'warn', component: 'esm', message: `${ctx.mapping.logicalId}: could not delete a message: ${failure.Message ?? failure.Code}` });
    }
  }
};

const invokeBatch = async (ctx: PollerContext, batch: readonly Message[]): Promise<void> => {
  ctx.counted();
  let outcome: InvokeResult;
  try {
    outcome = await ctx.lambda.invoke(ctx.mapping.functionName, sqsEvent(batch, ctx.mapping, ctx.region));
  } catch (error) {
    ctx.log({
      level: 'error',
      component: 'esm',
      message: `${ctx.mapping.logicalId}: the invocation of ${ctx.mapping.functionName} was lost, returning its ${batch.length} messages to the queue: ${(error as Error).message}`,
    });
    await returnToQueue(ctx, batch);
    return;
  }
  const ids = batch.map((message) => message.MessageId ?? '');
  const settled = settleBatch(ids, outcome, ctx.mapping.reportBatchItemFailures);
  if (!outcome.ok) {
    ctx.log({
      level: 'warn',
      component: 'esm',
      message: `${ctx.mapping.logicalId}: ${ctx.mapping.functionName} failed (${outcome.error.errorType}); its ${ids.length} messages return after the queue's visibility timeout`,
    });
  } else if (settled.retain.length > 0) {
    ctx.log({ level: 'info', component: 'esm', message: `${ctx.mapping.logicalId}: ${settled.retain.length} of ${ids.length} messages stay for redelivery` });
  }
  const deletable = new Set(settled.delete);
  await deleteMessages(
    ctx,
    batch.filter((message) => deletable.has(message.MessageId ?? '')),
  );
};

const poll = async (ctx: PollerContext): Promise<void> => {
  while (!ctx.signal.aborted) {
    try {
      const batch = await collectBatch(ctx);
      if (batch.length > 0 && ctx.signal.aborted) {
        ctx.log({ level: 'info', component: 'esm', message: `${ctx.mapping.logicalId}: stopping, returning ${batch.length} received messages to the queue` });
        await returnToQueue(ctx, batch);
      } else if (batch.length > 0) await invokeBatch(ctx, batch);
    } catch (error) {
      if (ctx.signal.aborted) return;
      ctx.log({ level: 'warn', component: 'esm', message: `${ctx.mapping.logicalId}: polling failed, retrying in 1 s: ${(error as Error).message}` });
      await sleep(1000, undefined, { signal: ctx.signal }).catch(() => undefined);
    }
  }
};

/**
 * Starts `concurrency` pollers for every enabled mapping.
 *
 * @example
 * const esm = startEventSourceMappings({ mappings, sqs, lambda, region: 'us-east-1' });
 * await esm.stop();
 */
export const startEventSourceMappings = (options: {
  mappings: readonly SqsEventSourceMapping[];
  sqs: SQSClient;
  lambda: LambdaInvoker;
  region: string;
  log?: LocalLog;
}): EventSourceMappings => {
  const controller = new AbortController();
  // Every poller's in-flight long poll listens on this one signal, so more than Node's default
  // of ten listeners is expected; each request removes its listener when it settles.
  setMaxListeners(0, controller.signal);
  const counts = new Map<string, number>();
  const pollers: Promise<void>[] = [];
  for (const mapping of options.mappings.filter((candidate) => candidate.enabled)) {
    const ctx: PollerContext = {
      mapping,
      sqs: options.sqs,
      lambda: options.lambda,
      region: options.region,
      log: options.log ?? silentLog,
      signal: controller.signal,
      counted: () => counts.set(mapping.logicalId, (counts.get(mapping.logicalId) ?? 0) + 1),
    };
    for (let index = 0; index < mapping.concurrency; index += 1) pollers.push(poll(ctx));
  }
  let stopping: Promise<void> | undefined;
  return {
    batches: () => Object.fromEntries(counts),
    stop: () => {
      controller.abort();
      return (stopping ??= Promise.all(pollers).then(() => undefined));
    },
  };
};
