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
