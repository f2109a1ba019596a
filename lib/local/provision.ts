import { CreateTableCommand, UpdateTimeToLiveCommand, type CreateTableCommandInput, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { z } from 'zod';
import { ProvisioningError, TemplateResolutionError } from './errors';
import type { TemplateEntry } from '../template/reader';
import { checkProperties, propertyPath, RESOURCE_TYPES, type TemplateResolver } from './template';

/** A table created in DynamoDB Local. */
export interface ProvisionedTable {
  readonly logicalId: string;
  readonly tableName: string;
}

/** A queue created in the SQS emulator. */
export interface ProvisionedQueue {
  readonly logicalId: string;
  readonly queueName: string;
  readonly queueUrl: string;
  readonly queueArn: string;
}

const KeySchema = z.array(z.object({ AttributeName: z.string(), KeyType: z.enum(['HASH', 'RANGE']) })).min(1);
const Projection = z.object({
  ProjectionType: z.enum(['ALL', 'KEYS_ONLY', 'INCLUDE']).optional(),
  NonKeyAttributes: z.array(z.string()).optional(),
});
const Throughput = z.object({ ReadCapacityUnits: z.coerce.number(), WriteCapacityUnits: z.coerce.number() });
const SecondaryIndex = z.object({
  IndexName: z.string(),
  KeySchema,
  Projection,
  ProvisionedThroughput: Throughput.optional(),
});

/** The table properties the local cloud emulates, after intrinsics are resolved. */
const TableProperties = z.object({
  TableName: z.string().optional(),
  KeySchema,
  AttributeDefinitions: z.array(z.object({ AttributeName: z.string(), AttributeType: z.enum(['S', 'N', 'B']) })),
  BillingMode: z.enum(['PAY_PER_REQUEST', 'PROVISIONED']).optional(),
  ProvisionedThroughput: Throughput.optional(),
  GlobalSecondaryIndexes: z.array(SecondaryIndex).optional(),
  LocalSecondaryIndexes: z.array(SecondaryIndex.omit({ ProvisionedThroughput: true })).optional(),
  StreamSpecification: z.object({ StreamViewType: z.enum(['KEYS_ONLY', 'NEW_IMAGE', 'OLD_IMAGE', 'NEW_AND_OLD_IMAGES']) }).optional(),
  TimeToLiveSpecification: z.object({ AttributeName: z.string(), Enabled: z.union([z.boolean(), z.enum(['true', 'false'])]) }).optional(),
});
type TableProperties = z.infer<typeof TableProperties>;

const TABLE_PROPERTIES = Object.keys(TableProperties.shape);
/** No local effect: encryption, backups, tags, capacity tuning, and a global table's replica list (locally there is one region). */
const INERT_TABLE_PROPERTIES = [
  'SSESpecification',
  'Tags',
  'PointInTimeRecoverySpecification',
  'DeletionProtectionEnabled',
  'ContributorInsightsSpecification',
  'TableClass',
  'ResourcePolicy',
  'OnDemandThroughput',
  'WarmThroughput',
  'Replicas',
  'WriteProvisionedThroughputSettings',
  'WriteOnDemandThroughputSettings',
];

const parseResolved = <T>(schema: z.ZodType<T>, entry: TemplateEntry, resolver: TemplateResolver): T => {
  const path = propertyPath(entry.logicalId);
  const parsed = schema.safeParse(resolver.resolve(entry.resource.Properties ?? {}, path));
  if (!parsed.success) throw new TemplateResolutionError(path, z.prettifyError(parsed.error));
  return parsed.data;
};

/** Secondary indexes inherit the table's billing: on-demand tables must not send index throughput. */
const createTableInput = (tableName: string, props: TableProperties): CreateTableCommandInput => {
  const provisioned = props.BillingMode === 'PROVISIONED' || (props.BillingMode === undefined && props.ProvisionedThroughput !== undefined);
  const throughput = props.ProvisionedThroughput ?? { ReadCapacityUnits: 5, WriteCapacityUnits: 5 };
  return {
    TableName: tableName,
    KeySchema: props.KeySchema,
    AttributeDefinitions: props.AttributeDefinitions,
    ...(provisioned ? { BillingMode: 'PROVISIONED', ProvisionedThroughput: throughput } : { BillingMode: 'PAY_PER_REQUEST' }),
    GlobalSecondaryIndexes: props.GlobalSecondaryIndexes?.map((index) => ({
      IndexName: index.IndexName,
      KeySchema: index.KeySchema,
      Projection: index.Projection,
      ...(provisioned ? { ProvisionedThroughput: index.ProvisionedThroughput ?? throughput } : {}),
    })),
    LocalSecondaryIndexes: props.LocalSecondaryIndexes,
    StreamSpecification: props.StreamSpecification ? { StreamEnabled: true, StreamViewType: props.StreamSpecification.StreamViewType } : undefined,
  };
};

const provisionTable = async (entry: TemplateEntry, resolver: TemplateResolver, client: DynamoDBClient): Promise<ProvisionedTable> => {
  checkProperties(entry, TABLE_PROPERTIES, INERT_TABLE_PROPERTIES);
  const props = parseResolved(TableProperties, entry, resolver);
  const tableName = resolver.physical(entry.logicalId).ref;
  try {
    await client.send(new CreateTableCommand(createTableInput(tableName, props)));
    const ttl = props.TimeToLiveSpecification;
    if (ttl && String(ttl.Enabled) === 'true') {
      await client.send(new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: ttl.AttributeName, Enabled: true } }));
    }
  } catch (error) {
    throw new ProvisioningError(entry.logicalId, `creating table ${tableName} in DynamoDB Local failed: ${(error as Error).message}`, { cause: error });
  }
  return { logicalId: entry.logicalId, tableName };
};

/**
 * Creates every AWS::DynamoDB::Table and AWS::DynamoDB::GlobalTable of the template in DynamoDB
 * Local: keys, attribute definitions, secondary indexes, stream and TTL.
 *
 * @example
 * const tables = await provisionTables(resolver, new DynamoDBClient({ endpoint: ddb.endpoint }));
 */
export const provisionTables = async (resolver: TemplateResolver, client: DynamoDBClient): Promise<ProvisionedTable[]> => {
  const tables: ProvisionedTable[] = [];
  for (const entry of resolver.entries(RESOURCE_TYPES.table, RESOURCE_TYPES.globalTable)) tables.push(await provisionTable(entry, resolver, client));
  return tables;
};

const RedrivePolicy = z.object({ deadLetterTargetArn: z.string(), maxReceiveCount: z.coerce.number().int().min(1) });

/** CloudFormation accepts the redrive policies as objects or as JSON text; SQS wants JSON text. */
const policyObject = z.union([
  z.string().transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'is not JSON' });
      return z.NEVER;
    }
  }),
  z.record(z.string(), z.unknown()),
]);

const QueueProperties = z.object({
  QueueName: z.string().optional(),
  FifoQueue: z.union([z.boolean(), z.enum(['true', 'false'])]).optional(),
  ContentBasedDeduplication: z.union([z.boolean(), z.enum(['true', 'false'])]).optional(),
  DeduplicationScope: z.string().optional(),
  FifoThroughputLimit: z.string().optional(),
  VisibilityTimeout: z.coerce.number().int().optional(),
  MessageRetentionPeriod: z.coerce.number().int().optional(),
  DelaySeconds: z.coerce.number().int().optional(),
  MaximumMessageSize: z.coerce.number().int().optional(),
  ReceiveMessageWaitTimeSeconds: z.coerce.number().int().optional(),
  RedrivePolicy: policyObject.pipe(RedrivePolicy).optional(),
  RedriveAllowPolicy: policyObject.optional(),
});
type QueueProperties = z.infer<typeof QueueProperties>;

const QUEUE_PROPERTIES = Object.keys(QueueProperties.shape);
/** Server-side encryption and tags have no local effect. */
const INERT_QUEUE_PROPERTIES = ['KmsMasterKeyId', 'KmsDataKeyReusePeriodSeconds', 'SqsManagedSseEnabled', 'Tags'];

const queueAttributes = (props: QueueProperties): Record<string, string> => {
  const { QueueName: _name, RedrivePolicy: redrive, RedriveAllowPolicy: allow, ...plain } = props;
  const attributes: Record<string, string> = {};
  for (const [key, value] of Object.entries(plain)) if (value !== undefined) attributes[key] = String(value);
  if (redrive) attributes.RedrivePolicy = JSON.stringify(redrive);
  if (allow) attributes.RedriveAllowPolicy = JSON.stringify(allow);
  return attributes;
};

/**
 * fauxqs accepts a redrive policy whose dead-letter queue does not exist and then never moves
 * anything, which would hide a broken DLQ; so the target must be a queue of this template.
 */
const checkDeadLetterTarget = (entry: TemplateEntry, props: QueueProperties, queueArns: ReadonlySet<string>): void => {
  const target = props.RedrivePolicy?.deadLetterTargetArn;
  if (target !== undefined && !queueArns.has(target)) {
    throw new ProvisioningError(entry.logicalId, `its RedrivePolicy.deadLetterTargetArn ${target} is not a queue of this template`);
  }
};

const provisionQueue = async (
  entry: TemplateEntry,
  resolver: TemplateResolver,
  client: SQSClient,
  queueArns: ReadonlySet<string>,
): Promise<ProvisionedQueue> => {
  checkProperties(entry, QUEUE_PROPERTIES, INERT_QUEUE_PROPERTIES);
  const props = parseResolved(QueueProperties, entry, resolver);
  checkDeadLetterTarget(entry, props, queueArns);
  const physical = resolver.physical(entry.logicalId);
  const queueName = physical.attributes.QueueName as string;
  let created: string | undefined;
  try {
    created = (await client.send(new CreateQueueCommand({ QueueName: queueName, Attributes: queueAttributes(props) }))).QueueUrl;
  } catch (error) {
    throw new ProvisioningError(entry.logicalId, `creating queue ${queueName} in the SQS emulator failed: ${(error as Error).message}`, { cause: error });
  }
  if (created !== physical.ref) {
    throw new ProvisioningError(entry.logicalId, `the SQS emulator named the queue ${String(created)}, but the template resolved it to ${physical.ref}`);
  }
  return { logicalId: entry.logicalId, queueName, queueUrl: physical.ref, queueArn: physical.attributes.Arn as string };
};

/**
 * Creates every AWS::SQS::Queue of the template in the SQS emulator with its attributes
 * (visibility timeout, retention, delay, FIFO settings, redrive policy to its local DLQ).
 *
 * @example
 * const queues = await provisionQueues(resolver, new SQSClient({ endpoint: sqs.endpoint }));
 */
export const provisionQueues = async (resolver: TemplateResolver, client: SQSClient): Promise<ProvisionedQueue[]> => {
  const entries = resolver.entries(RESOURCE_TYPES.queue);
  const queueArns = new Set(entries.map((entry) => resolver.physical(entry.logicalId).attributes.Arn as string));
  const queues: ProvisionedQueue[] = [];
  for (const entry of entries) queues.push(await provisionQueue(entry, resolver, client, queueArns));
  return queues;
};
