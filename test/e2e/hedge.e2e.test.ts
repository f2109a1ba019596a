import { describe, expect, it } from 'vitest';
import type { RunRequestInput, RunResource } from '../../lib/contract';
import { client, deliverAgain, eventually, subtask } from './target';

/*
 * Hedged dispatch through the API (docs/hedging.md). Each run has one `chaos` subtask X over four
 * ids whose original waits `slowOriginalSeconds` after its model call before reading, while its
 * hedge copies do not: the copies start `afterSeconds` after dispatch and win the race. Each
 * original and copy makes one model call at 1 per call, so usage counts who spent.
 */

const IDS = ['p1', 'p2', 'p3', 'p4'];
/** Long enough that the copies have won before the original wakes; well inside the 30 s deadline. */
const SLOW_ORIGINAL_SECONDS = 8;

const hedgedRun = (goal: string, hedge: NonNullable<RunRequestInput['subtasks']>[number]['hedge'], allowanceCalls: number): RunRequestInput => ({
  goal,
  universe: { dimension: 'ids', ids: IDS },
  subtasks: [
    {
      id: 'X',
      worker: 'chaos',
      scope: { ids: IDS },
      input: { modelCalls: 1, slowOriginalSeconds: SLOW_ORIGINAL_SECONDS },
      deadlineSeconds: 30,
      budget: { modelCalls: allowanceCalls, estimatedCostPerCall: 1 },
      hedge,
    },
  ],
  policy: { retry: { timed_out: 0, invalid: 0, empty: 0 }, maxRounds: 1 },
  budget: { modelCalls: 20, costLimit: 20 },
});

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts the run; once X's race started, delivers every copy's message (and the original's) `times` more times. */
const runWithDuplicates = async (request: RunRequestInput, times: number): Promise<{ run: RunResource; after: RunResource }> => {
  const tessera = client();
  const { runId } = await tessera.createRun(request);
  // Before Dispatch the run has no subtasks yet.
  const started = await eventually(runId, (r) => (r.subtasks.find((s) => s.id === 'X')?.hedgeCopies?.length ?? 0) > 0, 30_000);
  const ids = ['X', ...(subtask(started, 'X').hedgeCopies ?? []).map((c) => c.id)];
  const deliveries = ids.flatMap((subtaskId) => Array.from({ length: times }, () => ({ v: 1 as const, tenantId: 'acme', runId, subtaskId })));
  await Promise.all(deliveries.map((message) => deliverAgain('chaos', message)));
  const run = await tessera.waitForRun(runId, { intervalMs: 250, timeoutMs: 60_000 });
  // The original wakes after the race, tries to record and is refused; late duplicates are refused too.
  await Promise.all(ids.map((subtaskId) => deliverAgain('chaos', { v: 1, tenantId: 'acme', runId, subtaskId })));
  await wait((SLOW_ORIGINAL_SECONDS + 3) * 1000);
  return { run, after: await tessera.getRun(runId) };
};

describe('hedged dispatch: the first complete cover wins, within the one allowance', () => {
  it('replicate: the original is slow, the replica wins, the run is complete and the loser’s call stays charged', async () => {
    const tessera = client();
    const { runId } = await tessera.createRun(hedgedRun('Hedge: a slow original raced by one replica', { afterSeconds: 2, mode: 'replicate', copies: 2 }, 4));
    const run = await tessera.waitForRun(runId, { intervalMs: 250, timeoutMs: 60_000 });
    const x = subtask(run, 'X');

    expect(run.status).toBe('succeeded');
    expect(x.state).toBe('ok');
    expect(x.hedgeWinner).toEqual({ by: 'replica', id: 'X.h1' });
    expect(x.hedgeCopies).toEqual([{ id: 'X.h1', assigned: { ids: IDS }, state: 'ok' }]);
    expect(x.observed).toEqual({ ids: IDS, recordCount: 4 });
    // One call by the original (made before it slowed down) and one by the replica, on X's one allowance.
    expect(x.usage).toEqual({ modelCalls: 2, estimatedCost: 2 });
    expect(run.usage).toEqual({ modelCalls: 2, estimatedCost: 2 });
    expect(run.answer?.coverage).toMatchObject({ complete: true, gaps: [], overlaps: [], degradedReason: [], problems: [] });
    // The progress counts X once, not its copy.
    expect(run.progress).toMatchObject({ dispatched: 1, terminal: 1, byState: { ok: 1 } });

    // The original wakes after the run ended: refused, nothing more charged, X unchanged.
    await wait((SLOW_ORIGINAL_SECONDS + 2) * 1000);
    const after = await tessera.getRun(runId);
    expect(subtask(after, 'X')).toEqual(x);
    expect(after.usage).toEqual(run.usage);
  });

  it('subdivide: two pieces tile X, reconcile proves it, and the coverage names the pieces that won', async () => {
    const tessera = client();
    const { runId } = await tessera.createRun(hedgedRun('Hedge: a slow original raced by two pieces', { afterSeconds: 2, mode: 'subdivide', copies: 2 }, 4));
    const run = await tessera.waitForRun(runId, { intervalMs: 250, timeoutMs: 60_000 });
    const x = subtask(run, 'X');

    expect(run.status).toBe('succeeded');
    expect(x.state).toBe('ok');
    expect(x.hedgeWinner).toEqual({ by: 'pieces', ids: ['X.h1', 'X.h2'] });
    // Near-equal chunks of the id set, in order: they tile X's scope with no overlap and no gap.
    expect(x.hedgeCopies).toEqual([
      { id: 'X.h1', assigned: { ids: ['p1', 'p2'] }, state: 'ok' },
      { id: 'X.h2', assigned: { ids: ['p3', 'p4'] }, state: 'ok' },
    ]);
    // The original's call and one per piece.
    expect(x.usage).toEqual({ modelCalls: 3, estimatedCost: 3 });
    expect(run.answer?.coverage).toMatchObject({ complete: true, partitions: 1, gaps: [], overlaps: [], degradedReason: [], problems: [] });
    expect(run.answer?.coverage.statement).toBe(
      'Coverage: four ids, one partition, no overlaps, no gaps. Covered by hedge pieces: X by X.h1 (ids p1 and p2) and X.h2 (ids p3 and p4).',
    );
  });

  it('replicate under duplicate deliveries: three racers want 3 calls of an allowance of 2; exactly 2 are spent', async () => {
    // The original spends 1 before slowing down; replicas X.h1 and X.h2 race for the last call:
    // one gets it and wins; the other is refused by the allowance (it ends invalid, covering
    // nothing) or, if it had not got that far, is closed when the run ends (cancelled).
    const { run, after } = await runWithDuplicates(
      hedgedRun('Hedge: two replicas, an allowance of 2, duplicates', { afterSeconds: 2, mode: 'replicate', copies: 3 }, 2),
      3,
    );
    const x = subtask(run, 'X');

    expect(run.status).toBe('succeeded');
    expect(x.state).toBe('ok');
    expect(x.hedgeWinner?.by).toBe('replica');
    const winner = x.hedgeWinner?.by === 'replica' ? x.hedgeWinner.id : '';
    expect(['X.h1', 'X.h2']).toContain(winner);
    expect(x.hedgeCopies?.map((c) => c.id)).toEqual(['X.h1', 'X.h2']);
    expect(x.hedgeCopies?.find((c) => c.id === winner)?.state).toBe('ok');
    // The run is stored succeeded before its live items are swept, so the loser's end is read after.
    const loser = subtask(after, 'X').hedgeCopies?.find((c) => c.id !== winner);
    expect(['invalid', 'cancelled']).toContain(loser?.state);
    expect(x.usage).toEqual({ modelCalls: 2, estimatedCost: 2 });
    expect(run.usage).toEqual({ modelCalls: 2, estimatedCost: 2 });
    expect(run.answer?.coverage.complete).toBe(true);
    expect(subtask(after, 'X').usage).toEqual(x.usage);
    expect(after.usage).toEqual(run.usage);
  });

  it('subdivide under duplicate deliveries: every message three more times, still one call per racer', async () => {
    const { run, after } = await runWithDuplicates(hedgedRun('Hedge: two pieces, duplicates', { afterSeconds: 2, mode: 'subdivide', copies: 2 }, 10), 3);
    const x = subtask(run, 'X');

    expect(run.status).toBe('succeeded');
    expect(x.hedgeWinner).toEqual({ by: 'pieces', ids: ['X.h1', 'X.h2'] });
    // An allowance of 10 leaves room for every duplicate to spend: none does (claims fence them).
    expect(x.usage).toEqual({ modelCalls: 3, estimatedCost: 3 });
    expect(run.usage).toEqual({ modelCalls: 3, estimatedCost: 3 });
    expect(run.answer?.coverage.complete).toBe(true);
    expect(subtask(after, 'X').usage).toEqual(x.usage);
    expect(after.usage).toEqual(run.usage);
  });
});
