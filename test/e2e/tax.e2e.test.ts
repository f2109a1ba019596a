import { describe, expect, it } from 'vitest';
import { TesseraApiError } from '../../lib/client';
import { client, example, runToEnd, subtask } from './target';

describe('the tax example: the tax year, split four ways', () => {
  it('rejects the hand-written "March through June" plan with a 400 naming the overlap, and runs nothing', async () => {
    const attempt = client().createRun(example('tax-2025-overlap'));
    const error = await attempt.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TesseraApiError);
    expect((error as TesseraApiError).status).toBe(400);
    expect((error as TesseraApiError).issues).toEqual([
      expect.objectContaining({
        path: 'subtasks.1.scope.from',
        code: 'assignment_overlap',
        subtaskIds: ['A', 'B'],
        from: '2025-03-01',
        toExclusive: '2025-04-01',
      }),
    ]);
  });

  it('runs the corrected plan, re-checks the June gap against the transaction feed, and says so', async () => {
    const run = await runToEnd(example('tax-2025'));

    expect(run.status).toBe('succeeded');
    // June's statement closed on the 27th, so B observed 2025-04-01..2025-06-27 over 18 transactions.
    expect(subtask(run, 'B')).toMatchObject({
      state: 'ok',
      observed: { minDate: '2025-04-01', maxDate: '2025-06-27', recordCount: 18 },
      sources: ['stmt-2025-04', 'stmt-2025-05', 'stmt-2025-06'],
      sourcesReached: 3,
      usage: { modelCalls: 3, estimatedCost: 21 },
    });
    expect(subtask(run, 'B.g1')).toMatchObject({
      worker: 'transaction-feed',
      round: 2,
      state: 'empty',
      assigned: { from: '2025-06-28', toExclusive: '2025-07-01' },
    });
    const coverage = run.answer?.coverage;
    expect(coverage).toMatchObject({ complete: true, partitions: 4, overlaps: [], missingQuestions: [], degradedReason: [] });
    expect(coverage?.gaps).toEqual([
      expect.objectContaining({ from: '2025-06-28', toExclusive: '2025-07-01', recheckedAgainst: 'transaction-feed', records: 0, status: 'confirmed_empty' }),
    ]);
    expect(coverage?.statement).toBe(
      'Coverage: 2025-01-01 to 2025-12-31, four partitions, no overlaps. One gap (2025-06-28 to 2025-06-30) re-checked against the transaction feed: zero transactions.',
    );
    // 12 model calls: three statements a quarter, one call each, at 7 per call.
    expect(run.usage).toEqual({ modelCalls: 12, estimatedCost: 84 });
    expect(run.answer?.result).toMatchObject({ totalDeductiblePence: 113747 });
  });

  it('stops a worker exactly at its allowance: a quarter needs three model calls, the allowance is two', async () => {
    const tax = example('tax-2025');
    const request = {
      ...tax,
      subtasks: tax.subtasks?.map((s) => (s.id === 'B' ? { ...s, budget: { modelCalls: 2, estimatedCostPerCall: 7 } } : s)),
      policy: { ...tax.policy, retry: { timed_out: 0, invalid: 0, empty: 0 } },
    };
    const run = await runToEnd(request);

    // The third reservation is refused by the ledger; the worker stops; nothing past the limit is charged.
    expect(subtask(run, 'B')).toMatchObject({ state: 'invalid', reason: 'budget exhausted: subtask calls', usage: { modelCalls: 2, estimatedCost: 14 } });
    expect(run.status).toBe('failed');
    expect(run.answer?.coverage.degradedReason).toContain('B:invalid');
  });
});
