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
