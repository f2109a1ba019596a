import { describe, expect, it } from 'vitest';
import { RELEASE_CONCURRENCY, releaseAll } from '../../lib/orchestration/run-execution';

/** A waiter port that answers after a tick and tracks how many calls are in flight at once. */
const port = (gone: ReadonlySet<string> = new Set(), failing?: string) => {
  let inFlight = 0;
  let peak = 0;
  const released: string[] = [];
  return {
    released,
    peak: () => peak,
    release: async (token: string) => {
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 1));
      inFlight -= 1;
      if (token === failing) throw Object.assign(new Error('throttled'), { name: 'ThrottlingException' });
      released.push(token);
      return gone.has(token) ? { delivered: false as const, reason: 'TaskTimedOut' as const } : { delivered: true as const };
    },
  };
};

describe('releaseAll', () => {
  it(`answers 1,000 waiters with at most ${RELEASE_CONCURRENCY} SendTaskSuccess calls in flight`, async () => {
    const tokens = Array.from({ length: 1000 }, (_, i) => `t${i}`);
    const executions = port(new Set(['t7', 't8']));
    expect(await releaseAll(executions, tokens, { cancelled: true })).toEqual({ delivered: 998, gone: 2 });
    expect([...executions.released].sort()).toEqual([...tokens].sort());
    expect(executions.peak()).toBe(RELEASE_CONCURRENCY);
  });

  it('rejects with the first failure that is not a gone waiter, after the calls in flight settle', async () => {
    const executions = port(new Set(), 't3');
    await expect(releaseAll(executions, ['t1', 't2', 't3', 't4'], { cancelled: true })).rejects.toMatchObject({ name: 'ThrottlingException' });
  });

  it('does nothing for no tokens', async () => {
    expect(await releaseAll(port(), [], { cancelled: true })).toEqual({ delivered: 0, gone: 0 });
  });
});
