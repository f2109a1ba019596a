import type { SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { processPartialBatch, type RecordResult } from '../../lib/application/batch';

const record = (messageId: string): SQSRecord =>
  ({ messageId, body: messageId, receiptHandle: `rh-${messageId}`, attributes: { ApproximateReceiveCount: '1' }, eventSourceARN: 'arn:aws:sqs:eu-west-1:000000000000:q' }) as unknown as SQSRecord;

describe('processPartialBatch', () => {
  it('reports only the records to deliver again, in batch order, and tells which one threw', async () => {
    const results: Record<string, RecordResult | Error> = { a: 'done', b: 'retry', c: new Error('boom'), d: 'done' };
    const errors: string[] = [];
    const response = await processPartialBatch(
      ['a', 'b', 'c', 'd'].map(record),
      async (r) => {
        const result = results[r.messageId];
        if (result instanceof Error) throw result;
        return result ?? 'done';
      },
      (r, error) => errors.push(`${r.messageId}: ${(error as Error).message}`),
    );
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'b' }, { itemIdentifier: 'c' }] });
    expect(errors).toEqual(['c: boom']);
  });

  it('answers an empty list of failures when every record is done', async () => {
    expect(await processPartialBatch([record('a')], async () => 'done', () => undefined)).toEqual({ batchItemFailures: [] });
  });
});
