import { describe, expect, it } from 'vitest';
import { referenceCatalog, referenceRegistry } from '../../examples/app';
import { runOffline } from '../../lib/testing';

/**
 * The fixture's deductible rows, written down when it was authored: a £25.00 standing order to
 * Shelter on the 5th of every month, and one more deductible expense on the 18th. For the second
 * quarter that is 3 × 2,500 + 8,000 (physiotherapy, April) + 1,999 (stationery, May) + 6,000
 * (optician, June) = 23,499 pence, over 18 transactions of which 6 are deductible.
 */
const Q2 = { from: '2025-04-01', toExclusive: '2025-07-01' };

const run = async (worker: string, assigned: { from: string; toExclusive: string }, budget = { modelCalls: 4, estimatedCostPerCall: 7 }) =>
  (await runOffline({ registry: referenceRegistry, worker, assigned, budget, subtaskId: 'T' })).outcome;

describe('tax-statements', () => {
  it('covers the second quarter only up to the June statement closing on the 27th', async () => {
    const outcome = await run('tax-statements', Q2);
    expect(outcome).toMatchObject({
      state: 'ok',
      observed: { minDate: '2025-04-01', maxDate: '2025-06-27', recordCount: 18 },
      sources: ['stmt-2025-04', 'stmt-2025-05', 'stmt-2025-06'],
      sourcesReached: 3,
      // One classification call per statement at 7 a call.
      usage: { modelCalls: 3, estimatedCost: 21 },
      findings: { currency: 'GBP', totalDeductiblePence: 23_499, transactions: 18, deductibleTransactions: 6 },
    });
  });

  it('finds no statement covering 28 to 30 June: empty, with no source reached', async () => {
    const outcome = await run('tax-statements', { from: '2025-06-28', toExclusive: '2025-07-01' });
    expect(outcome).toMatchObject({ state: 'empty', sourcesReached: 0, observed: { minDate: null, maxDate: null, recordCount: 0 }, usage: { modelCalls: 0 } });
  });

  it('is invalid when the quarter needs more classification calls than its allowance', async () => {
    const outcome = await run('tax-statements', Q2, { modelCalls: 2, estimatedCostPerCall: 7 });
    expect(outcome).toMatchObject({ state: 'invalid', reason: 'budget exhausted: subtask calls', usage: { modelCalls: 2, estimatedCost: 14 } });
  });
});

describe('transaction-feed, the alternate source', () => {
  it('re-checks the June gap: the feed answers and holds zero transactions', async () => {
    const outcome = await run('transaction-feed', { from: '2025-06-28', toExclusive: '2025-07-01' });
    expect(outcome).toMatchObject({
      state: 'empty',
      sources: ['transaction-feed'],
      sourcesReached: 1,
      observed: { minDate: null, maxDate: null, recordCount: 0 },
      usage: { modelCalls: 0, estimatedCost: 0 },
    });
  });

  it('agrees with the statements on the second quarter without a model call', async () => {
    const outcome = await run('transaction-feed', Q2);
    expect(outcome).toMatchObject({ state: 'ok', usage: { modelCalls: 0 }, findings: { totalDeductiblePence: 23_499, transactions: 18 } });
  });
});

describe('the tax kinds in the catalog and the merge', () => {
  it('names its source and alternate for the planner and the coverage statement', () => {
    const info = referenceCatalog.get('tax-statements');
    expect(info).toMatchObject({
      kind: 'tax-statements',
      dimension: 'time',
      label: 'monthly statements',
      recordNoun: 'transactions',
      alternateSource: 'transaction-feed',
    });
    expect(referenceCatalog.get('transaction-feed')).toMatchObject({ label: 'transaction feed', recordNoun: 'transactions' });
    expect(info?.validateInput({})).toEqual([]);
    expect(info?.validateInput({ account: 'x' })).toEqual([{ path: '', message: 'Unrecognized key: "account"' }]);
  });

  it('sums the four quarters into one total', async () => {
    const quarters = [
      { from: '2025-01-01', toExclusive: '2025-04-01' },
      Q2,
      { from: '2025-07-01', toExclusive: '2025-10-01' },
      { from: '2025-10-01', toExclusive: '2026-01-01' },
    ];
    const outcomes = await Promise.all(quarters.map((quarter) => run('tax-statements', quarter)));
    expect(outcomes.map((outcome) => outcome.state)).toEqual(['ok', 'ok', 'ok', 'ok']);
    const merged = referenceRegistry.merge(outcomes.map((outcome) => ({ worker: 'tax-statements', findings: outcome.findings })));
    // 12 × 2,500 for Shelter plus the twelve expenses of the 18th (83,747 pence) = 113,747.
    expect(merged.result).toEqual({
      currency: 'GBP',
      totalDeductiblePence: 113_747,
      totalDeductible: 1137.47,
      transactions: 72,
      deductibleTransactions: 24,
    });
    expect(merged.text).toBe('Deductible total: £1,137.47 from 72 transactions (24 deductible).');
  });
});
