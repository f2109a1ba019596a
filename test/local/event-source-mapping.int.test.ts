import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalCloud } from '../../lib/local/cloud';
import { startEventSourceMappings, type EventSourceMappings } from '../../lib/local/event-source-mapping';
import { createLambdaInvoker } from '../../lib/local/lambda-client';
import type { LocalLogEntry } from '../../lib/local/log';
import type { ProvisionedQueue } from '../../lib/local/provision';
import { documentClient, localRegion, sqsClient, uniqueName } from '../support/aws';
import { WORK_QUEUE } from './stack';
import { eventually, startTestCloud } from './support';

describe('SQS event-source mapping emulation', () => {
  let cloud: LocalCloud;
  const queue = (logicalId: string): ProvisionedQueue => cloud.resources.queues.find((candidate) => candidate.logicalId === logicalId) as ProvisionedQueue;
  const deliveries = async (): Promise<Record<string, unknown>[]> => {
    const tableName = cloud.resources.tables[0]?.tableName as string;
    const result = await documentClient().send(
      new QueryCommand({ TableName: tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'delivery' } }),
    );
    return result.Items ?? [];
  };

  beforeAll(async () => {
    cloud = await startTestCloud();
  });
  afterAll(() => cloud?.stop());

  it('deletes the records a batch processed, redelivers the reported failure, then dead-letters it after maxReceiveCount', async () => {
    const sqs = sqsClient();
    const work = queue('WorkQueue');
    for (const body of ['ok-1', 'poison', 'ok-2']) {
      await sqs.send(
        new SendMessageCommand({ QueueUrl: work.queueUrl, MessageBody: body, MessageAttributes: { kind: { DataType: 'String', StringValue: 'test' } } }),
      );
    }
    const dead = await eventually('the poison message in the DLQ', async () => {
      const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queue('WorkDlq').queueUrl, WaitTimeSeconds: 1 }));
      return received.Messages?.[0];
    });
    expect(dead.Body).toBe('poison');

    // Each delivery is recorded as body#ApproximateReceiveCount: the good records once, the poison
    // one on each of its maxReceiveCount (2) receives.
    const seen = (await deliveries()).map((item) => item.sk).sort();
    expect(seen).toEqual(['ok-1#1', 'ok-2#1', 'poison#1', 'poison#2']);
    expect(WORK_QUEUE.maxReceiveCount).toBe(2);

    const attributes = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: work.queueUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
    );
    expect(attributes.Attributes).toEqual({ ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '0' });
  });

  it('hands the function the SQS record Lambda builds', async () => {
    const first = (await deliveries()).find((item) => item.sk === 'ok-1#1');
    expect(first?.record).toMatchObject({
      body: 'ok-1',
      md5OfBody: createHash('md5').update('ok-1').digest('hex'),
      eventSource: 'aws:sqs',
      eventSourceARN: queue('WorkQueue').queueArn,
      awsRegion: 'us-east-1',
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: expect.stringMatching(/^\d+$/),
        SenderId: expect.any(String),
        ApproximateFirstReceiveTimestamp: expect.stringMatching(/^\d+$/),
      },
      messageAttributes: { kind: { stringValue: 'test', stringListValues: [], binaryListValues: [], dataType: 'String' } },
    });
    expect((first?.batchSize as number) <= WORK_QUEUE.batchSize).toBe(true);
  });
});

describe('SQS event-source mapping emulation: a lost invocation', () => {
  /** Far longer than the test may wait: a message left in flight would not come back in time. */
  const VISIBILITY_TIMEOUT_SECONDS = 600;
  let lambdaServer: Server | undefined;
  let mappings: EventSourceMappings | undefined;
  afterAll(async () => {
    await mappings?.stop();
    await new Promise((resolve) => (lambdaServer ? lambdaServer.close(resolve) : resolve(undefined)));
  });

  it('returns the batch of an invoke that failed on the wire to the queue at once, and logs it at error level', async () => {
    const admin = sqsClient();
    const created = await admin.send(
      new CreateQueueCommand({ QueueName: uniqueName('lost-invoke'), Attributes: { VisibilityTimeout: String(VISIBILITY_TIMEOUT_SECONDS) } }),
    );
    const queueUrl = created.QueueUrl as string;
    const { Attributes } = await admin.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
    const bodies = ['m1', 'm2', 'm3', 'm4', 'm5'];
    for (const body of bodies) await admin.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));

    // A real Lambda endpoint that drops the connection of the first invoke (the request never
    // reaches a function) and answers every later one with an empty partial-batch response.
    let invokes = 0;
    const delivered: string[] = [];
    lambdaServer = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        invokes += 1;
        if (invokes === 1) {
          request.socket.destroy();
          return;
        }
        const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as SQSEvent;
        delivered.push(...event.Records.map((record) => record.body));
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ batchItemFailures: [] }));
      });
    });
    await new Promise<void>((resolve) => lambdaServer?.listen(0, '127.0.0.1', resolve));
    const { port } = lambdaServer.address() as AddressInfo;

    const logged: LocalLogEntry[] = [];
    mappings = startEventSourceMappings({
      mappings: [
        {
          logicalId: 'LossyMapping',
          functionName: 'Worker',
          queueUrl,
          queueArn: Attributes?.QueueArn as string,
          batchSize: 5,
          maximumBatchingWindowSeconds: 0,
          concurrency: 1,
          reportBatchItemFailures: true,
          enabled: true,
        },
      ],
      sqs: admin,
      lambda: createLambdaInvoker({ endpoint: `http://127.0.0.1:${port}`, region: localRegion }),
      region: localRegion,
      log: (entry) => logged.push(entry),
    });

    await eventually('every message delivered to an invoke that answered', async () => (delivered.length >= bodies.length ? true : undefined));
    await mappings.stop();

    expect([...delivered].sort()).toEqual(bodies);
    const lost = logged.filter((entry) => entry.level === 'error' && entry.component === 'esm');
    expect(lost).toHaveLength(1);
    expect(lost[0]?.message).toMatch(/^LossyMapping: the invocation of Worker was lost, returning its \d messages to the queue: /);
    const left = await admin.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
    );
    expect(left.Attributes).toEqual({ ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '0' });
  });
});

describe('SQS event-source mapping emulation: idle pollers', () => {
  it(
    "long-poll for SQS's maximum of 20 s, as Lambda's pollers do, wake for a message at once, and stop without waiting the poll out",
    { timeout: 60_000 },
    async () => {
      const admin = sqsClient();
      const created = await admin.send(new CreateQueueCommand({ QueueName: uniqueName('idle-pollers') }));
      const queueUrl = created.QueueUrl as string;
      const { Attributes } = await admin.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
      // Every ReceiveMessage the pollers send, with the wait it asked for.
      const waits: number[] = [];
      const polling = sqsClient();
      polling.middlewareStack.add(
        (next) => async (args) => {
          const input = args.input as { WaitTimeSeconds?: number; QueueUrl?: string };
          if (input.QueueUrl === queueUrl && input.WaitTimeSeconds !== undefined) waits.push(input.WaitTimeSeconds);
          return next(args);
        },
        { step: 'initialize' },
      );
      const delivered: string[] = [];
      const lambdaServer = createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
          delivered.push(...(JSON.parse(Buffer.concat(chunks).toString('utf8')) as SQSEvent).Records.map((record) => record.body));
          response.writeHead(200, { 'content-type': 'application/json' }).end('null');
        });
      });
      await new Promise<void>((resolve) => lambdaServer.listen(0, '127.0.0.1', resolve));
      const concurrency = 2;
      const idle = startEventSourceMappings({
        mappings: [
          {
            logicalId: 'Idle',
            functionName: 'Worker',
            queueUrl,
            queueArn: Attributes?.QueueArn as string,
            batchSize: 1,
            maximumBatchingWindowSeconds: 0,
            concurrency,
            reportBatchItemFailures: false,
            enabled: true,
          },
        ],
        sqs: polling,
        lambda: createLambdaInvoker({ endpoint: `http://127.0.0.1:${(lambdaServer.address() as AddressInfo).port}`, region: localRegion }),
        region: localRegion,
      });
      try {
        // Three seconds idle: one long poll per poller (with 1-s polls it was three each).
        await new Promise((resolve) => setTimeout(resolve, 3000));
        expect(waits).toEqual(Array.from({ length: concurrency }, () => 20));
        await admin.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'wake' }));
        await eventually('the message delivered during a long poll', async () => (delivered.length > 0 ? true : undefined));
        expect(delivered).toEqual(['wake']);
      } finally {
        await idle.stop();
        await new Promise((resolve) => lambdaServer.close(resolve));
      }
    },
  );
});

describe('SQS event-source mapping emulation: the batching window', () => {
  /**
   * One poller on a fresh queue holding `first`, with batches of up to 5. The first ReceiveMessage
   * the poller sends after it received `first` sends `second` to the queue before it goes out, so
   * that receive finds it: a poller that receives again before invoking puts both in one batch,
   * one that invokes at once leaves `second` to a batch of its own. Resolves to every batch's bodies.
   */
  const batchesWith = async (maximumBatchingWindowSeconds: number): Promise<string[][]> => {
    const admin = sqsClient();
    const created = await admin.send(new CreateQueueCommand({ QueueName: uniqueName('window') }));
    const queueUrl = created.QueueUrl as string;
    const { Attributes } = await admin.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
    await admin.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'first' }));

    let firstReceived = false;
    let secondSent = false;
    const polling = sqsClient();
    polling.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'ReceiveMessageCommand') return next(args);
        if (firstReceived && !secondSent) {
          secondSent = true;
          await admin.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'second' }));
        }
        const result = await next(args);
        const messages = (result.output as { Messages?: { Body?: string }[] }).Messages ?? [];
        if (messages.some((message) => message.Body === 'first')) firstReceived = true;
        return result;
      },
      { step: 'initialize' },
    );
    const batches: string[][] = [];
    const lambdaServer = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        batches.push((JSON.parse(Buffer.concat(chunks).toString('utf8')) as SQSEvent).Records.map((record) => record.body));
        response.writeHead(200, { 'content-type': 'application/json' }).end('null');
      });
    });
    await new Promise<void>((resolve) => lambdaServer.listen(0, '127.0.0.1', resolve));
    const mappings = startEventSourceMappings({
      mappings: [
        {
          logicalId: 'Window',
          functionName: 'Worker',
          queueUrl,
          queueArn: Attributes?.QueueArn as string,
          batchSize: 5,
          maximumBatchingWindowSeconds,
          concurrency: 1,
          reportBatchItemFailures: false,
          enabled: true,
        },
      ],
      sqs: polling,
      lambda: createLambdaInvoker({ endpoint: `http://127.0.0.1:${(lambdaServer.address() as AddressInfo).port}`, region: localRegion }),
      region: localRegion,
    });
    try {
      await eventually('both messages delivered', async () => (batches.flat().length >= 2 ? true : undefined));
      return batches;
    } finally {
      await mappings.stop();
      await new Promise((resolve) => lambdaServer.close(resolve));
    }
  };

  it("without a window (Lambda's default), invokes with what one receive returned, without receiving again first", async () => {
    expect(await batchesWith(0)).toEqual([['first'], ['second']]);
  });

  it('with a window, keeps receiving into the batch before it invokes', async () => {
    expect(await batchesWith(1)).toEqual([['first', 'second']]);
  });
});
