import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { EnqueueFailed, NoQueueForWorker } from './errors';
import type { Delivery } from './message';

/** SendMessageBatch takes at most ten entries. */
const BATCH = 10;

/** How often, and how patiently, a batch's unsent entries are sent again. */
export interface EnqueueRetry {
  readonly attempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

/**
 * Three attempts per batch, the later two after a full-jitter wait of up to 100 and 200 ms: a
 * batch SQS partly refused (throttled, or an internal error) is usually taken a moment later, and
 * the dispatch Task retries `EnqueueFailed` with its own, longer backoff after that.
 */
export const DEFAULT_ENQUEUE_RETRY: EnqueueRetry = { attempts: 3, baseDelayMs: 50, maxDelayMs: 1000 };

export interface SubtaskQueueOptions {
  readonly client: SQSClient;
  /** Worker kind → queue URL. Each kind has its own queue so its concurrency can be capped. */
  readonly queueUrls: Readonly<Record<string, string>>;
  /** @default DEFAULT_ENQUEUE_RETRY */
  readonly retry?: EnqueueRetry;
  /** Waits between attempts; tests record the waits instead. @default setTimeout */
  readonly pause?: (ms: number) => Promise<void>;
}

const defaultPause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

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
export const createSubtaskQueue = ({ client, queueUrls, retry = DEFAULT_ENQUEUE_RETRY, pause = defaultPause }: SubtaskQueueOptions) => {
  const urlFor = (worker: string): string => {
    const url = queueUrls[worker];
    if (!url) throw new NoQueueForWorker(worker, Object.keys(queueUrls));
    return url;
  };

  const sendBatch = async (url: string, batch: readonly Delivery[]): Promise<void> => {
    let pending = batch.map((delivery, index) => ({ Id: String(index), MessageBody: JSON.stringify(delivery.message), delivery }));
    let codes: string[] = [];
    let lastError: unknown;
    for (let attempt = 0; attempt < retry.attempts && pending.length > 0; attempt += 1) {
      // Full jitter: a random wait up to base · 2^attempt, so refused senders do not retry in step.
      if (attempt > 0) await pause(Math.random() * Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** attempt));
      try {
        const result = await client.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: pending.map(({ Id, MessageBody }) => ({ Id, MessageBody })) }));
        const failed = new Set((result.Failed ?? []).map((f) => f.Id));
        codes = (result.Failed ?? []).map((f) => f.Code ?? 'Unknown');
        pending = pending.filter((entry) => failed.has(entry.Id));
      } catch (error) {
        lastError = error;
        codes = [(error as Error).name];
      }
    }
    if (pending.length > 0) {
      throw new EnqueueFailed(
        pending.map((p) => p.delivery.message.subtaskId),
        codes,
        { cause: lastError },
      );
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
