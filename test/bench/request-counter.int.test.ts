import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { ledgerTableDefinition } from '../../lib/ledger';
import { resolveLocalhostSubdomains } from '../../lib/local/loopback-dns';
import { startRequestCounter, type RequestCounter } from '../../bench/request-counter';
import { createTable, dynamoClient, localCredentials, localRegion, uniqueName } from '../support/aws';

const sdkConfig = (endpoint: string) => ({ endpoint, region: localRegion, credentials: localCredentials });

/** Posts one AWS JSON-protocol request as raw bytes, to compare what comes back byte for byte. */
const rawCall = async (endpoint: string, target: string, body: unknown) => {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': target,
      authorization: 'AWS4-HMAC-SHA256 Credential=local/20250101/us-east-1/dynamodb/aws4_request',
    },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: Buffer.from(await response.arrayBuffer()) };
};

describe('request counter in front of DynamoDB Local', () => {
  const table = uniqueName('request-counter');
  let counter: RequestCounter;
  let documents: DynamoDBDocumentClient;

  beforeAll(async () => {
    // Any pk/sk table will do; the ledger's definition is one.
    await createTable(dynamoClient(), ledgerTableDefinition(table));
    counter = await startRequestCounter({ target: inject('dynamoEndpoint'), keepBodies: true });
    documents = DynamoDBDocumentClient.from(new DynamoDBClient(sdkConfig(counter.endpoint)));
  });
  afterAll(() => counter.stop());

  it('counts each operation with the items it touched, and the SDK sees the answers it would see directly', async () => {
    counter.reset();
    await documents.send(new PutCommand({ TableName: table, Item: { pk: 'run', sk: 'RUN', calls: 3 } }));
    await documents.send(
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: table, Item: { pk: 'run', sk: 'SUB#A' } } },
          { Put: { TableName: table, Item: { pk: 'run', sk: 'SUB#B' } } },
          {
            ConditionCheck: {
              TableName: table,
              Key: { pk: 'run', sk: 'RUN' },
              ConditionExpression: 'calls = :three',
              ExpressionAttributeValues: { ':three': 3 },
            },
          },
        ],
      }),
    );
    await documents.send(
      new BatchWriteCommand({ RequestItems: { [table]: ['C', 'D', 'E', 'F'].map((id) => ({ PutRequest: { Item: { pk: 'run', sk: `SUB#${id}` } } })) } }),
    );
    const got = await documents.send(new GetCommand({ TableName: table, Key: { pk: 'run', sk: 'RUN' }, ConsistentRead: true }));
    const subtasks = await documents.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sub)',
        ExpressionAttributeValues: { ':pk': 'run', ':sub': 'SUB#' },
      }),
    );

    expect(got.Item).toEqual({ pk: 'run', sk: 'RUN', calls: 3 });
    expect(subtasks.Items?.map((item) => item.sk)).toEqual(['SUB#A', 'SUB#B', 'SUB#C', 'SUB#D', 'SUB#E', 'SUB#F']);
    const counts = counter.counts();
    expect(Object.keys(counts).sort()).toEqual(['BatchWriteItem', 'GetItem', 'PutItem', 'Query', 'TransactWriteItems']);
    expect(counts.PutItem).toMatchObject({ requests: 1, errors: 0, items: 1 });
    expect(counts.TransactWriteItems).toMatchObject({ requests: 1, errors: 0, items: 3 });
    expect(counts.BatchWriteItem).toMatchObject({ requests: 1, errors: 0, items: 4 });
    expect(counts.GetItem).toMatchObject({ requests: 1, errors: 0, items: 1 });
    expect(counts.Query).toMatchObject({ requests: 1, errors: 0, items: 6 });
  });

  it('passes a refused conditional write through as the SDK error, and counts it as an error', async () => {
    counter.reset();
    const refused = documents.send(new PutCommand({ TableName: table, Item: { pk: 'run', sk: 'RUN' }, ConditionExpression: 'attribute_not_exists(pk)' }));
    await expect(refused).rejects.toBeInstanceOf(ConditionalCheckFailedException);
    expect(counter.counts().PutItem).toMatchObject({ requests: 1, errors: 1, items: 1 });
    expect(counter.exchanges()[0]?.status).toBe(400);
  });

  it('returns the same status and body bytes as the target, and records their size and the request body', async () => {
    const request = { TableName: table, Key: { pk: { S: 'run' }, sk: { S: 'RUN' } }, ConsistentRead: true };
    const direct = await rawCall(inject('dynamoEndpoint'), 'DynamoDB_20120810.GetItem', request);
    counter.reset();
    const proxied = await rawCall(counter.endpoint, 'DynamoDB_20120810.GetItem', request);

    expect(proxied.status).toBe(200);
    expect(proxied.body.equals(direct.body)).toBe(true);
    expect(counter.counts().GetItem?.responseBytes).toBe(direct.body.length);
    const [exchange] = counter.exchanges();
    expect(exchange?.requestBody?.toString('utf8')).toBe(JSON.stringify(request));
    expect(exchange?.responseBody?.equals(direct.body)).toBe(true);
  });

  it('forgets everything on reset()', async () => {
    await documents.send(new GetCommand({ TableName: table, Key: { pk: 'run', sk: 'RUN' } }));
    counter.reset();
    expect(counter.counts()).toEqual({});
    expect(counter.exchanges()).toEqual([]);
  });
});

describe('request counter in front of the SQS emulator', () => {
  let counter: RequestCounter;
  let sqs: SQSClient;
  let releaseDns: () => void;
  let queueUrl: string;

  beforeAll(async () => {
    counter = await startRequestCounter({ target: inject('sqsEndpoint') });
    // fauxqs names queues after the Host it was called on, so clients use that name, as the local cloud does.
    releaseDns = resolveLocalhostSubdomains();
    sqs = new SQSClient(sdkConfig(`http://sqs.${localRegion}.localhost:${counter.port}`));
    const created = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName('request-counter') }));
    queueUrl = created.QueueUrl ?? '';
  });
  afterAll(async () => {
    await counter.stop();
    releaseDns();
  });

  it('keeps the Host header, so the emulator names the queue after the counter', () => {
    expect(new URL(queueUrl).host).toBe(`sqs.${localRegion}.localhost:${counter.port}`);
  });

  it('tells deliveries from empty polls and counts batch entries', async () => {
    counter.reset();
    const empty = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 0 }));
    await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: ['1', '2', '3'].map((id) => ({ Id: id, MessageBody: `message ${id}` })) }));
    const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 30 }));
    const messages = received.Messages ?? [];
    const [first] = messages;
    await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: first?.ReceiptHandle, VisibilityTimeout: 0 }));
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: messages.slice(1).map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle })),
      }),
    );

    expect(empty.Messages ?? []).toEqual([]);
    expect(messages.map((message) => message.Body).sort()).toEqual(['message 1', 'message 2', 'message 3']);
    const counts = counter.counts();
    expect(counts.SendMessageBatch).toMatchObject({ requests: 1, errors: 0, items: 3 });
    expect(counts.ReceiveMessage).toMatchObject({ requests: 2, errors: 0, items: 3, nonEmpty: 1 });
    expect(counts.ChangeMessageVisibility).toMatchObject({ requests: 1, items: 1 });
    expect(counts.DeleteMessageBatch).toMatchObject({ requests: 1, items: 2 });
    expect(counts.SendMessageBatch?.nonEmpty).toBeUndefined();
  });

  it('records a long poll its caller abandoned, and keeps serving', async () => {
    const { QueueUrl: idle } = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName('request-counter-idle') }));
    counter.reset();
    const controller = new AbortController();
    const poll = sqs.send(new ReceiveMessageCommand({ QueueUrl: idle, WaitTimeSeconds: 20 }), { abortSignal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 100));
    controller.abort();
    await expect(poll).rejects.toThrow();
    await vi.waitFor(() => expect(counter.counts().ReceiveMessage).toMatchObject({ requests: 1, errors: 1, items: 0 }));
    // (Not received back: fauxqs, called directly too, hands the next message to the abandoned waiter.)
    const sent = await sqs.send(new SendMessageBatchCommand({ QueueUrl: idle, Entries: [{ Id: '1', MessageBody: 'after the abort' }] }));
    expect(sent.Successful?.map((entry) => entry.Id)).toEqual(['1']);
  });

  it('closes a long poll still open when it stops', async () => {
    const other = await startRequestCounter({ target: inject('sqsEndpoint') });
    const client = new SQSClient({ ...sdkConfig(`http://sqs.${localRegion}.localhost:${other.port}`), maxAttempts: 1 });
    const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName: uniqueName('request-counter-stop') }));
    const poll = client.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 20 }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await other.stop();
    await expect(poll).rejects.toThrow();
  });
});

describe('request counter lifecycle', () => {
  it('answers 502 and counts the failure when the target is unreachable', async () => {
    const closed = await startRequestCounter({ target: 'http://127.0.0.1:9' });
    try {
      const answer = await rawCall(closed.endpoint, 'DynamoDB_20120810.GetItem', {});
      expect(answer.status).toBe(502);
      expect(closed.counts().GetItem).toMatchObject({ requests: 1, errors: 1 });
    } finally {
      await closed.stop();
    }
  });

  it('stops listening on stop(), and a second stop() is harmless', async () => {
    const counter = await startRequestCounter({ target: inject('dynamoEndpoint') });
    await counter.stop();
    await counter.stop();
    await expect(fetch(counter.endpoint)).rejects.toThrow();
  });
});
