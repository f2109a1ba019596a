import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { EnqueueFailed, NoQueueForWorker } from './errors';
import type { Delivery } from './message';

/** SendMessageBatch takes at most ten entries. */
const BATCH = 10;
const ATTEMPTS = 3;

export interface SubtaskQueueOptions {
  readonly client: SQSClient;
  /** Worker kind → queue URL. Each kind has its own queue so its concurrency can be capped. */
  readonly queueUrls: Readonly<Record<string, string>>;
}

/**
 * Enqueues subtasks on their worker kind's queue.
 *
 * Delivery is at least once: a Dispatch retry may enqueue a subtask twice, and that is safe
 * because a worker must claim the subtask in the ledger before doing anything.
 *
 * @example
 * const queue = createSubtaskQueue({ client: new SQSClient({}), queueUrls: { 'tax-statements': url } });
 * await queue.enqueue([{ worker: 'tax-statements', message: { v: 1, tenantId, runId, subtaskId: 'A' } }]);
 */
export const createSubtaskQueue = ({ client, queueUrls }: SubtaskQueueOptions) => {
  const urlFor = (worker: string): string => {
    const url = queueUrls[worker];
    if (!url) throw new NoQueueForWorker(worker, Object.keys(queueUrls));
    return url;
  };

  const sendBatch = async (url: string, batch: readonly Delivery[]): Promise<void> => {
    let pending = batch.map((delivery, index) => ({ Id: String(index), MessageBody: JSON.stringify(delivery.message), delivery }));
    let codes: string[] = [];
    let lastError: unknown;
    for (let attempt = 0; attempt < ATTEMPTS && pending.length > 0; attempt += 1) {
      try {
        const result = await client.send(
          new SendMessageBatchCommand({ QueueUrl: url, Entries: pending.map(({ Id, MessageBody }) => ({ Id, MessageBody })) }),
        );
        const failed = new Set((result.Failed ?? []).map((f) => f.Id));
        codes = (result.Failed ?? []).map((f) => f.Code ?? 'Unknown');
        pending = pending.filter((entry) => failed.has(entry.Id));
      } catch (error) {
        lastError = error;
        codes = [(error as Error).name];
      }
    }
    if (pending.length > 0) {
      throw new EnqueueFailed(pending.map((p) => p.delivery.message.subtaskId), codes, { cause: lastError });
    }
  };

  return {
    /** Sends every delivery, grouped by queue and batched by ten. Throws `EnqueueFailed` if any is left unsent. */
    async enqueue(deliveries: readonly Delivery[]): Promise<void> {
      const byQueue = new Map<string, Delivery[]>();
      for (const delivery of deliveries) {
        const url = urlFor(delivery.worker);
        byQueue.set(url, [...(byQueue.get(url) ?? []), delivery]);
      }
      for (const [url, list] of byQueue) {
        for (let i = 0; i < list.length; i += BATCH) await sendBatch(url, list.slice(i, i + BATCH));
      }
    },
  };
};
export type SubtaskQueue = ReturnType<typeof createSubtaskQueue>;
