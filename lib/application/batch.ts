import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';

/** What one record's handler reports: `retry` when the message must be delivered again. */
export type RecordResult = 'done' | 'retry';

/**
 * Partial-batch processing in the shape of Powertools' batch processor
 * (`processPartialResponse(event, recordHandler)`): every record is handled on its own, and the
 * response names only the records to deliver again, for an event source mapping with
 * `ReportBatchItemFailures`. A handler that throws counts as `retry`; `onError` is told which.
 *
 * @example
 * return processPartialBatch(event.Records, (record) => deliver(record), (record, error) => log(record.messageId, error));
 */
export const processPartialBatch = async (
  records: readonly SQSRecord[],
  handle: (record: SQSRecord) => Promise<RecordResult>,
  onError: (record: SQSRecord, error: unknown) => void,
): Promise<SQSBatchResponse> => {
  const results = await Promise.all(
    records.map((record) =>
      handle(record).catch((error: unknown): RecordResult => {
        onError(record, error);
        return 'retry';
      }),
    ),
  );
  return { batchItemFailures: records.filter((_, i) => results[i] === 'retry').map((record) => ({ itemIdentifier: record.messageId })) };
};
