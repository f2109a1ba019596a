import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

/**
 * The ledger's single DynamoDB table: its key schema, shared by the CDK construct that creates
 * it in AWS, the local cloud that creates it in DynamoDB Local, and the adapter that uses it.
 * See docs/ledger.md for the access patterns and an example item of each entity.
 */
export const LEDGER_TABLE = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /** Epoch seconds after which DynamoDB may delete the item (idempotency records, daily counters). */
  timeToLiveAttribute: 'ttl',
} as const;

/**
 * The run list index (a global secondary index): the `SUMMARY` item of every run, keyed by
 * tenant and status, sorted by creation time. `GET /runs` queries it; nothing else does, and the
 * API's IAM policy allows Query on this index only. Projection ALL: the summary item is small
 * (a goal of at most 2,000 characters and a few counters) and is the list entry itself.
 */
export const RUN_LIST_INDEX = {
  indexName: 'run-list',
  /** `T#<tenant>#RUNS#<status>` (`runListPartition`). */
  partitionKey: 'listPk',
  /** `<createdAt>#<runId>` (`runListSort`). */
  sortKey: 'listSk',
} as const;

/**
 * The table as DynamoDB Local or a test creates it (on-demand capacity). TTL is enabled
 * separately with `UpdateTimeToLive` on {@link LEDGER_TABLE.timeToLiveAttribute}; the CDK
 * construct declares both.
 *
 * @example
 * await client.send(new CreateTableCommand(ledgerTableDefinition('tessera-ledger')));
 */
export const ledgerTableDefinition = (tableName: string): CreateTableCommandInput => ({
  TableName: tableName,
  BillingMode: 'PAY_PER_REQUEST',
  KeySchema: [
    { AttributeName: LEDGER_TABLE.partitionKey, KeyType: 'HASH' },
    { AttributeName: LEDGER_TABLE.sortKey, KeyType: 'RANGE' },
  ],
  AttributeDefinitions: [
    { AttributeName: LEDGER_TABLE.partitionKey, AttributeType: 'S' },
    { AttributeName: LEDGER_TABLE.sortKey, AttributeType: 'S' },
    { AttributeName: RUN_LIST_INDEX.partitionKey, AttributeType: 'S' },
    { AttributeName: RUN_LIST_INDEX.sortKey, AttributeType: 'S' },
  ],
  GlobalSecondaryIndexes: [
    {
      IndexName: RUN_LIST_INDEX.indexName,
      KeySchema: [
        { AttributeName: RUN_LIST_INDEX.partitionKey, KeyType: 'HASH' },
        { AttributeName: RUN_LIST_INDEX.sortKey, KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'ALL' },
    },
  ],
});
