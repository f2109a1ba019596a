import { DescribeTableCommand, DescribeTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { ProvisioningError } from '../../lib/local/errors';
import { provisionQueues, provisionTables, type ProvisionedQueue, type ProvisionedTable } from '../../lib/local/provision';
import { createResolver, parseTemplate, type LocalEnvironment } from '../../lib/local/template';
import { dynamoClient, localRegion, sqsClient, uniqueName } from '../support/aws';
import { synthTestStack, WORK_QUEUE } from './stack';

/** fauxqs's queue URL scheme for the shared emulator. */
const environment = (namePrefix: string): LocalEnvironment => ({
  region: localRegion,
  namePrefix,
  queueUrl: (name) => `http://sqs.${localRegion}.localhost:${new URL(inject('sqsEndpoint')).port}/000000000000/${name}`,
});

describe('provisioning the test stack in the emulators', () => {
  let tables: ProvisionedTable[];
  let queues: ProvisionedQueue[];
  const prefix = `${uniqueName('p')}-`;

  beforeAll(async () => {
    const resolver = createResolver(parseTemplate(synthTestStack()), environment(prefix));
    tables = await provisionTables(resolver, dynamoClient());
    queues = await provisionQueues(resolver, sqsClient());
  });

  it('creates the table with its keys, its secondary index, on-demand billing and TTL', async () => {
    expect(tables).toEqual([{ logicalId: 'Records', tableName: `${prefix}Records` }]);
    const { Table } = await dynamoClient().send(new DescribeTableCommand({ TableName: `${prefix}Records` }));
    expect(Table?.KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
    expect(Table?.GlobalSecondaryIndexes?.map((index) => [index.IndexName, index.KeySchema?.[0]?.AttributeName])).toEqual([['byToken', 'token']]);
    expect(Table?.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST');
    const ttl = await dynamoClient().send(new DescribeTimeToLiveCommand({ TableName: `${prefix}Records` }));
    expect(ttl.TimeToLiveDescription).toMatchObject({ TimeToLiveStatus: 'ENABLED', AttributeName: 'ttl' });
  });

  it('creates the work queue with its visibility timeout and its redrive policy to the local DLQ', async () => {
    const work = queues.find((queue) => queue.logicalId === 'WorkQueue') as ProvisionedQueue;
    const dlq = queues.find((queue) => queue.logicalId === 'WorkDlq') as ProvisionedQueue;
    const { Attributes } = await sqsClient().send(
      new GetQueueAttributesCommand({ QueueUrl: work.queueUrl, AttributeNames: ['VisibilityTimeout', 'RedrivePolicy', 'QueueArn'] }),
    );
    expect(Attributes?.VisibilityTimeout).toBe(String(WORK_QUEUE.visibilityTimeoutSeconds));
    expect(Attributes?.QueueArn).toBe(work.queueArn);
    expect(JSON.parse(Attributes?.RedrivePolicy ?? '{}')).toEqual({ deadLetterTargetArn: dlq.queueArn, maxReceiveCount: WORK_QUEUE.maxReceiveCount });
  });

  it('creates a global table and a FIFO queue from a hand-written template', async () => {
    const local = `${uniqueName('g')}-`;
    const template = parseTemplate({
      Resources: {
        Ledger: {
          Type: 'AWS::DynamoDB::GlobalTable',
          Properties: {
            KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
            AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
            BillingMode: 'PAY_PER_REQUEST',
            Replicas: [{ Region: { Ref: 'AWS::Region' } }],
            TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
          },
        },
        Ordered: { Type: 'AWS::SQS::Queue', Properties: { FifoQueue: true, ContentBasedDeduplication: true } },
      },
    });
    const resolver = createResolver(template, environment(local));
    expect(await provisionTables(resolver, dynamoClient())).toEqual([{ logicalId: 'Ledger', tableName: `${local}Ledger` }]);
    const [ordered] = await provisionQueues(resolver, sqsClient());
    expect(ordered?.queueName).toBe(`${local}Ordered.fifo`);
    const ttl = await dynamoClient().send(new DescribeTimeToLiveCommand({ TableName: `${local}Ledger` }));
    expect(ttl.TimeToLiveDescription?.AttributeName).toBe('expiresAt');
  });

  it('refuses a redrive policy whose dead-letter queue is not in the template', async () => {
    const template = parseTemplate({
      Resources: {
        Work: {
          Type: 'AWS::SQS::Queue',
          Properties: { RedrivePolicy: { deadLetterTargetArn: 'arn:aws:sqs:us-east-1:000000000000:elsewhere', maxReceiveCount: 3 } },
        },
      },
    });
    await expect(provisionQueues(createResolver(template, environment(`${uniqueName('r')}-`)), sqsClient())).rejects.toThrow(ProvisioningError);
  });
});
