/** The subtask queues as the worker handler sees them: received messages turned into the SQS event source's records. */
import { ReceiveMessageCommand, SendMessageCommand, type Message } from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { z } from 'zod';
import { SubtaskMessage } from '../../../lib/queue/message';
import { localRegion, sqsClient, uniqueName } from '../../support/aws';
import type { Kind, Pipeline } from './pipeline';

/** Every visible message on a queue, with the system attributes Lambda's event source asks for. */
export const receiveAll = async (url: string): Promise<Message[]> => {
  const client = sqsClient();
  const messages: Message[] = [];
  for (;;) {
    const page = await client.send(
      new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, MessageSystemAttributeNames: ['All'] }),
    );
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
export const deliver = (p: Pipeline, records: readonly SQSRecord[]) =>
  p.worker({ Records: [...records] } satisfies SQSEvent, { awsRequestId: uniqueName('invocation') });

/**
 * Receives this run's messages of one kind (optionally only some subtasks) and delivers them as one batch.
 *
 * @example
 * expect(await deliverRun(p, 'tax-statements', runId, ['A'])).toEqual({ batchItemFailures: [] });
 */
export const deliverRun = async (p: Pipeline, kind: Kind, runId: string, subtaskIds?: readonly string[]) => {
  const messages = (await messagesOfRun(p, kind, runId)).filter((m) => subtaskIds === undefined || subtaskIds.includes(subtaskOf(m).subtaskId));
  if (messages.length === 0) throw new Error(`no ${kind} message for run ${runId}`);
  return deliver(
    p,
    messages.map((message) => sqsRecord(p, kind, message)),
  );
};
