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
  ],
});
