import { CreateQueueCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { createSubtaskQueue } from '../../lib/queue/subtask-queue';
import { SubtaskMessage } from '../../lib/queue/message';
import { EnqueueFailed, NoQueueForWorker } from '../../lib/queue/errors';
import { sqsClient, uniqueName } from '../support/aws';

const drain = async (client: ReturnType<typeof sqsClient>, url: string): Promise<SubtaskMessage[]> => {
  const bodies: SubtaskMessage[] = [];
  for (;;) {
    const page = await client.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    if (!page.Messages?.length) return bodies;
    bodies.push(...page.Messages.map((m) => SubtaskMessage.parse(JSON.parse(m.Body ?? ''))));
  }
};

describe('subtask queue', () => {
  it('routes each subtask to its worker kind queue, batching past ten', async () => {
    const client = sqsClient();
    const taxUrl = (await client.send(new CreateQueueCommand({ QueueName: uniqueName('tax') }))).QueueUrl!;
    const feedUrl = (await client.send(new CreateQueueCommand({ QueueName: uniqueName('feed') }))).QueueUrl!;
    const queue = createSubtaskQueue({ client, queueUrls: { 'tax-statements': taxUrl, 'transaction-feed': feedUrl } });

    const ids = Array.from({ length: 12 }, (_, i) => `T${i + 1}`);
    await queue.enqueue([
      ...ids.map((subtaskId) => ({ worker: 'tax-statements', message: { v: 1 as const, tenantId: 't1', runId: 'r1', subtaskId } })),
      { worker: 'transaction-feed', message: { v: 1, tenantId: 't1', runId: 'r1', subtaskId: 'B.g1' } },
    ]);

    const tax = await drain(client, taxUrl);
    expect(tax.map((m) => m.subtaskId).sort()).toEqual([...ids].sort());
    expect(await drain(client, feedUrl)).toEqual([{ v: 1, tenantId: 't1', runId: 'r1', subtaskId: 'B.g1' }]);
  });

  it('refuses a worker kind that has no queue, naming it', async () => {
    const queue = createSubtaskQueue({ client: sqsClient(), queueUrls: { 'tax-statements': 'http://unused' } });
    const attempt = queue.enqueue([{ worker: 'scout-crm', message: { v: 1, tenantId: 't', runId: 'r', subtaskId: 'C' } }]);
    await expect(attempt).rejects.toBeInstanceOf(NoQueueForWorker);
    await expect(attempt).rejects.toThrow('no queue is configured for worker kind "scout-crm" (configured: tax-statements)');
  });
});

describe('subtask queue retries', () => {
  it('sends a refused batch again after a jittered backoff, then gives up with EnqueueFailed', async () => {
    const client = sqsClient();
    const url = (await client.send(new CreateQueueCommand({ QueueName: uniqueName('tax') }))).QueueUrl!;
    // A queue that does not exist refuses every attempt.
    const missing = url.replace(/[^/]+$/, uniqueName('missing'));
    const waits: number[] = [];
    const queue = createSubtaskQueue({
      client,
      queueUrls: { 'tax-statements': missing },
      retry: { attempts: 3, baseDelayMs: 50, maxDelayMs: 1000 },
      pause: async (ms) => void waits.push(ms),
    });
    const attempt = queue.enqueue([{ worker: 'tax-statements', message: { v: 1, tenantId: 't1', runId: 'r1', subtaskId: 'A' } }]);
    await expect(attempt).rejects.toBeInstanceOf(EnqueueFailed);
    await expect(attempt).rejects.toMatchObject({ subtaskIds: ['A'] });
    // Two attempts after the first, each one after a wait of up to 50 · 2 and 50 · 4 ms.
    expect(waits.length).toBe(2);
    const [first, second] = waits;
    expect(first).toBeGreaterThanOrEqual(0);
    expect(first).toBeLessThan(100);
    expect(second).toBeGreaterThanOrEqual(0);
    expect(second).toBeLessThan(200);
  });
});
