import { describe, expect, it } from 'vitest';
import { openCheckpointer, type CheckpointSource } from '../../lib/workers/checkpointer';

/**
 * A worker reports one region per record it read. Folding each report into the covered region at
 * once, or reading the whole observation per report, costs the records read so far per record:
 * a 50,000-id subtask then ran past its 120-s deadline. These count the work per report instead of
 * timing it.
 */
describe('the checkpointer under one report per record', () => {
  const ids = Array.from({ length: 1_000 }, (_, i) => `id-${String(i).padStart(4, '0')}`);

  const drive = () => {
    let read = 0;
    let observations = 0;
    const source: CheckpointSource = {
      dimension: 'ids',
      assigned: { ids },
      observed: () => {
        observations += 1;
        return { ids: ids.slice(0, read), recordCount: read } as ReturnType<CheckpointSource['observed']>;
      },
      sources: () => ['ledger'],
      usage: () => ({ modelCalls: 0, estimatedCost: 0 }),
    };
    const checkpointer = openCheckpointer(source, {
      port: { write: async () => undefined },
      generation: 1,
      deadlineMs: 10_000_000,
      // A clock that never reaches the 5-s interval or the flush: no write is due, only considered.
      now: () => 0,
      setTimer: () => () => undefined,
    });
    for (const id of ids) {
      read += 1;
      checkpointer.covered({ ids: [id] });
    }
    return { checkpointer, observations };
  };

  it('reads the observation about twice per 100 reports, not per report', () => {
    const { observations } = drive();
    // The first report considers a write (due and schedule read the observation once each); after
    // that, one consideration per everyRecords (100) reports: 2 + 2 × 10 at most for 1,000 reports.
    expect(observations).toBeGreaterThan(0);
    expect(observations).toBeLessThanOrEqual(22);
  });

  it('still covers every reported record, each once', () => {
    const { checkpointer } = drive();
    expect(checkpointer.coveredScopes()).toEqual([{ ids }]);
  });
});

/** A test clock: timers fire in order when it is advanced. */
const testClock = () => {
  let now = 0;
  let timers: { at: number; callback: () => void; cancelled: boolean }[] = [];
  const settle = async () => {
    for (let i = 0; i < 10; i += 1) await Promise.resolve();
  };
  return {
    now: () => now,
    setTimer: (callback: () => void, delayMs: number) => {
      const timer = { at: now + delayMs, callback, cancelled: false };
      timers.push(timer);
      return () => void (timer.cancelled = true);
    },
    async advanceTo(at: number) {
      for (;;) {
        const next = timers.filter((t) => !t.cancelled && t.at <= at).sort((a, b) => a.at - b.at)[0];
        if (next === undefined) break;
        timers = timers.filter((t) => t !== next);
        now = next.at;
        next.callback();
        await settle();
      }
      now = at;
      await settle();
    },
  };
};

describe('the handover window', () => {
  // Quarter B (April-June); the subdivide hedge is due at 20 s, the deadline is 50 s; the default
  // policy: every 5 s, window from 15 s, hold until 21.5 s, flush at 19.75 s, HANDOVER_WRITES = 2.
  const assigned = { from: '2025-04-01', toExclusive: '2025-07-01' };
  const open = (handoverAtMs: number | undefined) => {
    const clock = testClock();
    let records = 0;
    const written: { at: number; sequence: number; covered: unknown }[] = [];
    const source: CheckpointSource = {
      dimension: 'time',
      assigned,
      observed: () => ({ minDate: null, maxDate: null, recordCount: records }),
      sources: () => ['statements'],
      usage: () => ({ modelCalls: 0, estimatedCost: 0 }),
    };
    const checkpointer = openCheckpointer(source, {
      port: { write: async (c) => void written.push({ at: clock.now(), sequence: c.sequence, covered: c.partial?.covered }) },
      generation: 1,
      deadlineMs: 50_000,
      now: clock.now,
      setTimer: clock.setTimer,
      handoverAtMs,
    });
    const read = async (at: number, scope: { from: string; toExclusive: string }, count: number) => {
      await clock.advanceTo(at);
      records += count;
      checkpointer.covered(scope);
      checkpointer.partial({ records });
      await clock.advanceTo(at);
    };
    return { clock, checkpointer, written, read };
  };
  const april = { from: '2025-04-01', toExclusive: '2025-05-01' };
  const may = { from: '2025-05-01', toExclusive: '2025-06-01' };
  const earlyJune = { from: '2025-06-01', toExclusive: '2025-06-10' };
  const lateJune = { from: '2025-06-10', toExclusive: '2025-06-20' };

  it('writes the pending findings when a call that would run past the handover waits, and holds it until 1.5 s after', async () => {
    const { clock, checkpointer, written, read } = open(20_000);
    await read(3_000, april, 2); // due at 5 s (5 s after the start)
    await read(17_000, may, 2); // 12 s since the last write: due at once
    await read(18_000, earlyJune, 1); // 1 s since: the schedule waits (until 19.75 s, the flush before the handover)
    // Inside the window, a call that ends before the handover (18 s + 1 s < 20 s) does not wait.
    await expect(Promise.race([checkpointer.holdModelCall(1_000), Promise.resolve('waits')])).resolves.toBeUndefined();
    await clock.advanceTo(18_200);
    // 18.2 s + a 2-s call reaches 20 s, and June 10-30 is unread: it waits until 20 + 1.5 = 21.5 s.
    let released = false;
    void checkpointer.holdModelCall(2_000).then(() => void (released = true));
    await clock.advanceTo(18_200);
    expect(written.map((w) => [w.at, w.sequence])).toEqual([
      [5_000, 1],
      [17_000, 2],
      [18_200, 3],
    ]);
    // The prefix at the cut is the early write's: April, May and June 1-9.
    expect(written.at(-1)?.covered).toEqual([{ from: '2025-04-01', toExclusive: '2025-06-10' }]);
    await clock.advanceTo(21_499);
    expect(released).toBe(false);
    await clock.advanceTo(21_500);
    expect(released).toBe(true);
    // No write at 19.75 s: nothing new was pending.
    expect(written).toHaveLength(3);
  });

  it('flushes 0.25 s before the handover when no call waits, and writes early at most twice', async () => {
    const { clock, written, read } = open(20_000);
    await read(3_000, april, 2);
    await read(17_000, may, 2);
    await read(18_000, earlyJune, 1);
    await clock.advanceTo(19_750);
    // 19.75 s: June 1-9 written (early write 1); a report at 19.8 s is written at once (early write 2);
    // one at 19.9 s waits for the schedule (19.8 + 5 = 24.8 s).
    await read(19_800, lateJune, 1);
    await read(19_900, { from: '2025-06-20', toExclusive: '2025-06-25' }, 1);
    expect(written.map((w) => w.at)).toEqual([5_000, 17_000, 19_750, 19_800]);
    await clock.advanceTo(24_800);
    expect(written.map((w) => w.at)).toEqual([5_000, 17_000, 19_750, 19_800, 24_800]);
  });

  it('holds nothing without a handover, or once the tools answered the whole assignment', async () => {
    const none = open(undefined);
    await none.read(18_000, earlyJune, 1);
    await expect(none.checkpointer.holdModelCall(60_000)).resolves.toBeUndefined();
    const whole = open(20_000);
    await whole.read(18_000, assigned, 6);
    await expect(whole.checkpointer.holdModelCall(60_000)).resolves.toBeUndefined();
    // Without a handover the 18-s report waits for the 5-s schedule: written at 18 s (18 s since the start).
    expect(none.written.map((w) => w.at)).toEqual([18_000]);
  });
});
