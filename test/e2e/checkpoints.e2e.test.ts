import { describe, expect, it } from 'vitest';
import type { RunRequestInput } from '../../lib/contract';
import { example, runToEnd, subtask } from './target';

/**
 * Checkpoints end to end, in the local cloud. The figures come from the statements fixture
 * (examples/app/fixtures/statements-2025.json), six transactions a month, two of them deductible:
 *   April 10,500p, May 4,499p, June 8,500p (June's statement closes on the 27th);
 *   so April + May = 14,999p over 12 transactions (4 deductible), the quarter 23,499p over 18 (6),
 *   and the year 113,747p over 72 transactions (24 deductible).
 * A statement costs one model call at 7; the year is 12 calls, 84.
 */

type Hedge = NonNullable<NonNullable<RunRequestInput['subtasks']>[number]['hedge']>;

/** The tax example with quarter B given to the fault-injection variant of the tax kind. */
const taxWithFaultyB = (input: Record<string, unknown>, b: { deadlineSeconds: number; hedge?: Hedge }, maxRounds: number): RunRequestInput => {
  const tax = example('tax-2025');
  return {
    ...tax,
    subtasks: tax.subtasks?.map((s) => (s.id === 'B' ? { ...s, worker: 'tax-statements-faulty', input, ...b } : s)),
    policy: { ...tax.policy, maxRounds },
  };
};

describe('checkpoints: a timed-out or crashed worker keeps what it read', () => {
  it('keeps B’s April and May when a slow June statement makes it miss its deadline, and sends only June again', async () => {
    // B reads April and May at once, then waits 60 s on June; its deadline is 12 s. The first
    // checkpoint is due 5 s in (findings were reported), and one is flushed 1 s before the
    // deadline, so B's last checkpoint holds both months. Its retry reads June at once; June's
    // statement ends on the 27th, so a third round re-checks 06-28..06-30 against the feed.
    const run = await runToEnd(taxWithFaultyB({ slowMonth: '2025-06', slowSeconds: 60 }, { deadlineSeconds: 12 }, 3));

    expect(run.status).toBe('succeeded');
    const b = subtask(run, 'B');
    expect(b.state).toBe('timed_out');
    expect(b.checkpoint?.partial).toEqual({
      covered: [{ from: '2025-04-01', toExclusive: '2025-06-01' }],
      observed: { minDate: '2025-04-01', maxDate: '2025-05-31', recordCount: 12 },
      findings: { currency: 'GBP', totalDeductiblePence: 14_999, transactions: 12, deductibleTransactions: 4 },
    });
    // B.r2 is sent exactly the rest, and says what it does not repeat.
    const retry = subtask(run, 'B.r2');
    expect(retry).toMatchObject({
      worker: 'tax-statements-faulty',
      state: 'ok',
      assigned: { from: '2025-06-01', toExclusive: '2025-07-01' },
      lineage: { kind: 'retry', of: 'B', attempt: 2, prefix: [{ from: '2025-04-01', toExclusive: '2025-06-01' }] },
      observed: { minDate: '2025-06-01', maxDate: '2025-06-27', recordCount: 6 },
      usage: { modelCalls: 1, estimatedCost: 7 },
    });
    const coverage = run.answer?.coverage;
    // Prefix 04-01..06-01 + rest 06-01..07-01 = B's quarter: complete, and nothing read twice.
    expect(coverage).toMatchObject({ complete: true, overlaps: [], missingQuestions: [], degradedReason: [] });
    expect(coverage?.gaps).toEqual([
      expect.objectContaining({ from: '2025-06-28', toExclusive: '2025-07-01', recheckedAgainst: 'transaction-feed', records: 0, status: 'confirmed_empty' }),
    ]);
    expect(coverage?.statement).toContain('B read 2025-04-01..2025-05-31 before its deadline; 2025-06-01..2025-06-30 was sent again as B.r2 and read.');
    // The year once: April and May from B's checkpoint, June from B.r2, never both.
    expect(run.answer?.result).toMatchObject({ totalDeductiblePence: 113_747, transactions: 72, deductibleTransactions: 24 });
    // B's two calls stay charged and B.r2 made one: the same 12 calls as a run without the fault.
    expect(b.usage).toEqual({ modelCalls: 2, estimatedCost: 14 });
    expect(run.usage).toEqual({ modelCalls: 12, estimatedCost: 84 });
  });

  it('resumes a worker that crashed after a checkpoint: the next generation reads only June and counts nothing twice', async () => {
    // B reads April and May, then dies 12 s in (a TransientFailure before June): by then the
    // checkpoint with both months is written (due 5 s in, and again 5 s later at the latest).
    // SQS delivers B again; the new generation resumes from it and reads June only.
    const run = await runToEnd(taxWithFaultyB({ crashBefore: '2025-06', crashAfterMs: 12_000 }, { deadlineSeconds: 60 }, 2));

    // Every generation that did not resume a checkpoint dies before June, so B ending ok means
    // the redelivered generation was handed B's checkpoint (ctx.resumeFrom) and went on from it.
    expect(run.status).toBe('succeeded');
    const b = subtask(run, 'B');
    expect(b).toMatchObject({
      state: 'ok',
      // The resumed checkpoint's 12 records and June's 6, each once.
      observed: { minDate: '2025-04-01', maxDate: '2025-06-27', recordCount: 18 },
    });
    // No retry: the redelivery finished the subtask.
    expect(run.subtasks.map((s) => s.id).filter((id) => id.startsWith('B.r'))).toEqual([]);
    // 2 calls before the crash, 1 after: April and May were not classified again.
    expect(run.usage).toEqual({ modelCalls: 12, estimatedCost: 84 });
    expect(run.answer?.result).toMatchObject({ totalDeductiblePence: 113_747, transactions: 72, deductibleTransactions: 24 });
    expect(run.answer?.coverage).toMatchObject({ complete: true, overlaps: [] });
  });

  it('A subdivide hedge with handover: prefix plus pieces tile the scope, and every copy’s calls are counted', async () => {
    // B reads April and May at once (one call each), checkpointing its findings 5 s in, then
    // waits 60 s on June. Its hedge is due 20 s after dispatch (room for a cold start before the
    // checkpoint, as in the emulator lane): B hands over at that checkpoint,
    // and the two pieces split only the unread rest, June's 30 days, at whole days:
    //   B.h1 2025-06-01..06-16: the 1st (groceries 4,380p), 5th (charity 2,500p), 12th (dining 4,100p)
    //   B.h2 2025-06-16..07-01: the 18th (medical 6,000p), 24th (rail 2,340p), 27th (broadband 3,200p)
    // Each piece classifies its part of June's statement in one call. Their reads leave gaps
    // (06-13..06-15 after B.h1's last record; 06-16..06-17 before B.h2's first and 06-28..06-30
    // after its last), which round 2 re-checks against the feed: no transactions there.
    const run = await runToEnd(
      taxWithFaultyB({ slowMonth: '2025-06', slowSeconds: 60 }, { deadlineSeconds: 50, hedge: { afterSeconds: 20, mode: 'subdivide', copies: 2 } }, 2),
    );

    expect(run.status).toBe('succeeded');
    const b = subtask(run, 'B');
    expect(b.state).toBe('ok');
    expect(b.handedOverAt).toEqual(expect.any(String));
    // The prefix: what B's checkpoint held when it handed over.
    expect(b.checkpoint?.partial).toEqual({
      covered: [{ from: '2025-04-01', toExclusive: '2025-06-01' }],
      observed: { minDate: '2025-04-01', maxDate: '2025-05-31', recordCount: 12 },
      findings: { currency: 'GBP', totalDeductiblePence: 14_999, transactions: 12, deductibleTransactions: 4 },
    });
    // The pieces: prefix 04-01..06-01 + 06-01..06-16 + 06-16..07-01 = B's quarter, no overlap.
    expect(b.hedgeCopies).toEqual([
      { id: 'B.h1', assigned: { from: '2025-06-01', toExclusive: '2025-06-16' }, state: 'ok' },
      { id: 'B.h2', assigned: { from: '2025-06-16', toExclusive: '2025-07-01' }, state: 'ok' },
    ]);
    expect(b.hedgeWinner).toEqual({ by: 'pieces', ids: ['B.h1', 'B.h2'] });
    // Every copy's calls on B's one allowance: the original's 2 (April, May) and one per piece.
    expect(b.usage).toEqual({ modelCalls: 4, estimatedCost: 28 });
    // A 3 + B 4 + C 3 + D 3: one call more than the year without a hedge (12), the re-checks none.
    expect(run.usage).toEqual({ modelCalls: 13, estimatedCost: 91 });

    const coverage = run.answer?.coverage;
    expect(coverage).toMatchObject({ complete: true, overlaps: [], missingQuestions: [], degradedReason: [] });
    expect(coverage?.problems.filter((p) => p.code === 'assignment_overlap' || p.code === 'assignment_gap')).toEqual([]);
    expect(coverage?.gaps.map((g) => ['from' in g ? g.from : '', 'toExclusive' in g ? g.toExclusive : '', g.status]).sort()).toEqual([
      ['2025-06-13', '2025-06-16', 'confirmed_empty'],
      ['2025-06-16', '2025-06-18', 'confirmed_empty'],
      ['2025-06-28', '2025-07-01', 'confirmed_empty'],
    ]);
    expect(coverage?.statement).toContain('B by its own read of 2025-04-01..2025-05-31 before it handed over, B.h1');
    // The prefix's findings once, each piece's once: 28,249 + 14,999 + 2,500 + 6,000 + 39,749 + 22,250.
    expect(run.answer?.result).toMatchObject({ totalDeductiblePence: 113_747, transactions: 72, deductibleTransactions: 24 });
  });

  const chaosRequest = (retries: number): RunRequestInput => ({
    goal: 'Fault injection: a worker without partial findings reads everything, then misses its deadline',
    universe: { dimension: 'ids', ids: ['k1', 'k2', 'k3'] },
    subtasks: [
      {
        id: 'K',
        worker: 'chaos',
        scope: { ids: ['k1', 'k2', 'k3'] },
        input: { fault: 'crash', faultAttempts: 'first' },
        deadlineSeconds: 8,
        budget: { modelCalls: 1, estimatedCostPerCall: 0 },
      },
    ],
    policy: { retry: { timed_out: retries, invalid: 0, empty: 0 }, onOptionalGap: 'degrade', maxRounds: 1 + retries },
    budget: { modelCalls: 2, costLimit: 1 },
  });

  it('sends a kind without partial findings its whole scope again: what it read unreported counts for nothing', async () => {
    // `chaos` reads k1..k3 at once, then goes silent past its 8 s deadline. Its checkpoint (flushed
    // 1 s before the deadline) shows the three ids read, but the kind reports no partial findings,
    // so they are not a prefix: the retry is sent all three.
    const run = await runToEnd(chaosRequest(1));

    const k = subtask(run, 'K');
    expect(k.state).toBe('timed_out');
    expect(k.checkpoint?.covered).toEqual([{ ids: ['k1', 'k2', 'k3'] }]);
    expect(k.checkpoint?.partial).toBeUndefined();
    const retry = subtask(run, 'K.r2');
    expect(retry).toMatchObject({ state: 'ok', assigned: { ids: ['k1', 'k2', 'k3'] }, observed: { ids: ['k1', 'k2', 'k3'], recordCount: 3 } });
    expect(retry.lineage).toEqual({ kind: 'retry', of: 'K', attempt: 2 });
    expect(run.answer?.coverage).toMatchObject({ complete: true, overlaps: [] });
    expect(run.answer?.coverage.statement).not.toContain('before its deadline');
    expect(run.answer?.result).toEqual({ touched: ['k1', 'k2', 'k3'] });
  });

  it('claims none of it when there is no retry: the whole scope is the gap', async () => {
    const run = await runToEnd(chaosRequest(0));

    expect(subtask(run, 'K').state).toBe('timed_out');
    expect(subtask(run, 'K').checkpoint?.covered).toEqual([{ ids: ['k1', 'k2', 'k3'] }]);
    expect(run.answer?.coverage).toMatchObject({
      complete: false,
      degradedReason: ['K:timed_out'],
      gaps: [{ ids: ['k1', 'k2', 'k3'], kind: 'unread', subtaskId: 'K', reason: 'timed_out', status: 'unchecked' }],
    });
  });
});
