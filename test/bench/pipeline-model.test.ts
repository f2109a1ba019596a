import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { checkpointWrites, compactDynamoRows, createCompactor, dynamoRows } from '../../bench/pipeline/model';
import { totalCapacity } from '../../bench/pipeline/report';
import type { Exchange } from '../../bench/request-counter';

const RUN_KEY = { pk: 'T#t#R#r', sk: 'RUN' };
const SUB_KEY = { pk: 'T#t#R#r', sk: 'SUB#A' };
/** Sizes as the benchmark reads them after the run, keyed `pk NUL sk`. */
const key = (item: { pk: string; sk: string }) => `${item.pk}\u0000${item.sk}`;

const exchange = (operation: string, request: unknown, response: unknown = {}): Exchange => {
  const requestBody = Buffer.from(JSON.stringify(request));
  const responseBody = Buffer.from(JSON.stringify(response));
  return { operation, status: 200, items: 1, requestBytes: requestBody.length, responseBytes: responseBody.length, requestBody, responseBody };
};

describe('the capacity model', () => {
  it("sizes a ConditionCheck by its item as it stood then, and the item's last Update by the larger of before and after", () => {
    // The RUN item is put at 2+7 + 2+3 + 4+1,480 = 1,498 bytes (2 KB), checked by an outcome's
    // transaction, and only grows to 13,000 bytes (13 KB) when the run finishes.
    const run = { ...RUN_KEY, blob: 'x'.repeat(1480) };
    const exchanges = [
      exchange('TransactWriteItems', { TransactItems: [{ Put: { TableName: 't', Item: marshall(run) } }] }),
      exchange('TransactWriteItems', {
        TransactItems: [{ Update: { TableName: 't', Key: marshall(SUB_KEY) } }, { ConditionCheck: { TableName: 't', Key: marshall(RUN_KEY) } }],
      }),
      exchange('UpdateItem', { TableName: 't', Key: marshall(RUN_KEY) }),
    ];
    const sizes = new Map([
      [key(RUN_KEY), 13_000],
      [key(SUB_KEY), 800],
    ]);
    const rows = dynamoRows(exchanges, sizes);
    // Put 2 KB × 2 (transactional) = 4; outcome: SUB 1 KB × 2 + RUN as it stood, 2 KB × 2 = 6;
    // the finish: max(1,498, 13,000) bytes = 13 KB = 13. Sized after the run, the check would be 26.
    expect(rows.find((row) => row.operation === 'TransactWriteItems')?.capacity.writeUnits).toBe(10);
    expect(rows.find((row) => row.operation === 'UpdateItem')?.capacity.writeUnits).toBe(13);
    expect(totalCapacity(rows).writeUnits).toBe(23);
  });

  it('sizes an item no call saw before its first write by its size after the run (an upper bound)', () => {
    const rows = compactDynamoRows([createCompactor()(exchange('UpdateItem', { TableName: 't', Key: marshall(SUB_KEY) }))], new Map([[key(SUB_KEY), 2_100]]));
    expect(totalCapacity(rows).writeUnits).toBe(3);
  });
});

describe('checkpoint writes', () => {
  it("counts the UpdateItems that set a subtask's checkpoint sequence, and no other write", () => {
    const names = (...attributes: string[]) => Object.fromEntries(attributes.map((a) => [`#${a}`, a]));
    const exchanges = [
      // writeCheckpoint: SET #checkpoint, #checkpointSequence, #updatedAt.
      exchange('UpdateItem', { TableName: 't', Key: marshall(SUB_KEY), ExpressionAttributeNames: names('checkpoint', 'checkpointSequence', 'updatedAt') }),
      exchange('UpdateItem', { TableName: 't', Key: marshall(SUB_KEY), ExpressionAttributeNames: names('checkpoint', 'checkpointSequence', 'updatedAt') }),
      // A claim (generation, lease) and a Put: not checkpoints.
      exchange('UpdateItem', { TableName: 't', Key: marshall(SUB_KEY), ExpressionAttributeNames: names('state', 'generation', 'leaseExpiresAt') }),
      exchange('PutItem', { TableName: 't', Item: marshall(SUB_KEY) }),
    ];
    expect(checkpointWrites(exchanges)).toBe(2);
    expect(checkpointWrites(exchanges.slice(2))).toBe(0);
  });
});
