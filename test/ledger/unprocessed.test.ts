import { describe, expect, it } from 'vitest';
import { WritesUnprocessed } from '../../lib/ledger/errors';
import { backoffMs, untilProcessed } from '../../lib/ledger/failures';

/**
 * The batch-write loop of `writeBatches`: DynamoDB Local never sheds load, so the loop is driven
 * here by a `send` that answers what it left unprocessed, as BatchWriteItem does.
 */
const policy = { attempts: 4, baseDelayMs: 1, maxDelayMs: 2 } as const;
const context = { operation: 'writeBatches', runId: 'r1' };

describe('untilProcessed', () => {
  it('sends only the unprocessed items again, until none is left', async () => {
    const sent: string[][] = [];
    const unprocessed = [['b', 'c'], ['c'], []];
    await untilProcessed(policy, context, ['a', 'b', 'c'], async (requests) => {
      sent.push([...requests]);
      return unprocessed[sent.length - 1];
    });
    expect(sent).toEqual([['a', 'b', 'c'], ['b', 'c'], ['c']]);
  });

  it('gives up after its attempts with WritesUnprocessed, counting what was left', async () => {
    let sends = 0;
    const attempt = untilProcessed(policy, context, ['a', 'b'], async (requests) => {
      sends += 1;
      // 'b' is never processed.
      return requests.slice(-1);
    });
    await expect(attempt).rejects.toBeInstanceOf(WritesUnprocessed);
    await expect(attempt).rejects.toMatchObject({ name: 'WritesUnprocessed', attempts: 4, unprocessed: 1, runId: 'r1' });
    expect(sends).toBe(4);
  });

  it('waits a full-jitter backoff: up to base · 2^tries, never past the cap', () => {
    const waits = Array.from(
      { length: 200 },
      () => [backoffMs({ attempts: 8, baseDelayMs: 20, maxDelayMs: 1000 }, 2), backoffMs({ attempts: 8, baseDelayMs: 20, maxDelayMs: 1000 }, 9)] as const,
    );
    expect(waits.every(([early, late]) => early >= 0 && early < 80 && late >= 0 && late < 1000)).toBe(true);
  });
});
