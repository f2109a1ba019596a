import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import { FullBatchFailure } from '../runtime/errors';

/** What one record's handler reports: `retry` when the message must be delivered again. */
export type RecordResult = 'done' | 'retry';

/**
 * Partial-batch processing in the shape of Powertools' batch processor
 * (`processPartialResponse(event, recordHandler)`): every record is handled on its own, and the
 * response names only the records to deliver again, for an event source mapping with
 * `ReportBatchItemFailures`. A handler that throws counts as `retry`; `onError` is told which.
 * When every record of a (non-empty) batch is to be delivered again it throws `FullBatchFailure`
 * instead, as Powertools does: a batch that failed whole is a failed invocation, which Lambda's
 * `Errors` metric counts and the event-source mapping backs off from.
 *
 * @example
 * return processPartialBatch(event.Records, (record) => deliver(record), (record, error) => log(record.messageId, error));
 */
export const processPartialBatch = async (
  records: readonly SQSRecord[],
  handle: (record: SQSRecord) => Promise<RecordResult>,
  onError: (record: SQSRecord, error: unknown) => void,
): Promise<SQSBatchResponse> => {
  const errors: unknown[] = [];
  const results = await Promise.all(
    records.map((record) =>
      handle(record).catch((error: unknown): RecordResult => {
        errors.push(error);
        onError(record, error);
        return 'retry';
      }),
    ),
  );
  const failed = records.filter((_, i) => results[i] === 'retry');
  if (records.length > 0 && failed.length === records.length) throw new FullBatchFailure(records.length, errors);
  return { batchItemFailures: failed.map((record) => ({ itemIdentifier: record.messageId })) };
};
