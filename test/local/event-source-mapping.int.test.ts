import { GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalCloud } from '../../lib/local/cloud';
import type { ProvisionedQueue } from '../../lib/local/provision';
import { documentClient, sqsClient } from '../support/aws';
import { WORK_QUEUE } from './stack';
import { eventually, startTestCloud } from './support';

describe('SQS event-source mapping emulation', () => {
  let cloud: LocalCloud;
  const queue = (logicalId: string): ProvisionedQueue => cloud.resources.queues.find((candidate) => candidate.logicalId === logicalId) as ProvisionedQueue;
  const deliveries = async (): Promise<Record<string, unknown>[]> => {
    const tableName = cloud.resources.tables[0]?.tableName as string;
    const result = await documentClient().send(new QueryCommand({ TableName: tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'delivery' } }));
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
      await sqs.send(new SendMessageCommand({ QueueUrl: work.queueUrl, MessageBody: body, MessageAttributes: { kind: { DataType: 'String', StringValue: 'test' } } }));
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
      attributes: { ApproximateReceiveCount: '1', SentTimestamp: expect.stringMatching(/^\d+$/), SenderId: expect.any(String), ApproximateFirstReceiveTimestamp: expect.stringMatching(/^\d+$/) },
      messageAttributes: { kind: { stringValue: 'test', stringListValues: [], binaryListValues: [], dataType: 'String' } },
    });
    expect((first?.batchSize as number) <= WORK_QUEUE.batchSize).toBe(true);
  });
});
