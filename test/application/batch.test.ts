import type { SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { processPartialBatch, type RecordResult } from '../../lib/application/batch';
import { FullBatchFailure } from '../../lib/runtime/errors';

const record = (messageId: string): SQSRecord =>
  ({
    messageId,
    body: messageId,
    receiptHandle: `rh-${messageId}`,
    attributes: { ApproximateReceiveCount: '1' },
    eventSourceARN: 'arn:aws:sqs:eu-west-1:000000000000:q',
  }) as unknown as SQSRecord;

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

  it('throws FullBatchFailure when every record is to be delivered again, whether it threw or asked for a retry', async () => {
    const errors: string[] = [];
    const attempt = processPartialBatch(
      ['a', 'b', 'c'].map(record),
      async (r) => {
        if (r.messageId === 'b') throw new Error('boom');
        return 'retry';
      },
      (r) => errors.push(r.messageId),
    );
    await expect(attempt).rejects.toBeInstanceOf(FullBatchFailure);
    await expect(attempt).rejects.toMatchObject({
      name: 'FullBatchFailure',
      records: 3,
      message: 'all 3 record(s) of the batch failed processing; 1 of them threw (each logged on its own)',
    });
    // Every record was still handled, and the one that threw was reported.
    expect(errors).toEqual(['b']);
  });

  it('answers an empty list of failures for an empty batch', async () => {
    expect(
      await processPartialBatch(
        [],
        async () => 'retry',
        () => undefined,
      ),
    ).toEqual({ batchItemFailures: [] });
  });

  it('answers an empty list of failures when every record is done', async () => {
    expect(
      await processPartialBatch(
        [record('a')],
        async () => 'done',
        () => undefined,
      ),
    ).toEqual({ batchItemFailures: [] });
  });
});
