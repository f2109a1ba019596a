import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DispatchedSubtask, Hedge, RunRequestInput, Scope } from '../../lib/contract';
import {
  checkTiling,
  firstCompleteCover,
  hedgeAllowance,
  hedgeCopies,
  hedgePieces,
  hedgeWaitSeconds,
  handoverDueMs,
  validateRunRequest,
} from '../../lib/domain';
import { PLAN_OPTIONS, testCatalog } from './fixtures';

const DAY = 86_400_000;
const replicate2: Hedge = { afterSeconds: 20, mode: 'replicate', copies: 2 };

/** A request with a hedge written as a caller might, wrong values included, for validation to judge. */
const crm = (hedge: unknown, extra: Record<string, unknown> = {}): RunRequestInput =>
  ({
    goal: 'notes of the key accounts',
    universe: { dimension: 'ids', ids: ['acc-1', 'acc-2', 'acc-3'] },
    subtasks: [
      {
        id: 'CRM',
        worker: 'scout-crm',
        scope: { ids: ['acc-1', 'acc-2', 'acc-3'] },
        deadlineSeconds: 25,
        budget: { modelCalls: 4, estimatedCostPerCall: 7 },
        hedge,
        ...extra,
      },
    ],
    budget: { modelCalls: 10, costLimit: 100 },
  }) as unknown as RunRequestInput;

const problemsOf = (request: RunRequestInput) => {
  const result = validateRunRequest(request, testCatalog, PLAN_OPTIONS);
  return result.ok ? [] : result.problems.map(({ code, path }) => ({ code, path }));
};

describe('hedge in the contract and the planner', () => {
  it('accepts a hedge, defaults copies to 2 and carries it into the dispatched subtask', () => {
    const result = validateRunRequest(crm({ afterSeconds: 10, mode: 'replicate' }), testCatalog, PLAN_OPTIONS);
    expect(result.ok && result.subtasks[0]?.hedge).toEqual({ afterSeconds: 10, mode: 'replicate', copies: 2 });
  });

  it('refuses afterSeconds at or past the deadline, and copies outside 2..8, naming the field', () => {
    expect(problemsOf(crm({ afterSeconds: 25, mode: 'replicate', copies: 2 }))).toEqual([{ code: 'invalid_request', path: 'subtasks.0.hedge.afterSeconds' }]);
    expect(problemsOf(crm({ afterSeconds: 0, mode: 'replicate', copies: 2 }))).toEqual([{ code: 'invalid_request', path: 'subtasks.0.hedge.afterSeconds' }]);
    expect(problemsOf(crm({ afterSeconds: 5, mode: 'replicate', copies: 1 }))).toEqual([{ code: 'invalid_request', path: 'subtasks.0.hedge.copies' }]);
    expect(problemsOf(crm({ afterSeconds: 5, mode: 'subdivide', copies: 9 }))).toEqual([{ code: 'invalid_request', path: 'subtasks.0.hedge.copies' }]);
    expect(problemsOf(crm({ afterSeconds: 5, mode: 'halve', copies: 2 }))).toEqual([{ code: 'invalid_request', path: 'subtasks.0.hedge.mode' }]);
  });

  it('refuses a subdivide the scope cannot make: 3 ids into 4 pieces, one file into 2', () => {
    const result = validateRunRequest(crm({ afterSeconds: 5, mode: 'subdivide', copies: 4 }), testCatalog, PLAN_OPTIONS);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.problems).toEqual([
      {
        code: 'invalid_request',
        path: 'subtasks.0.hedge.copies',
        subtaskIds: ['CRM'],
        message: 'subtask CRM cannot be subdivided into 4 pieces: cannot cut three items into 4 non-empty parts',
      },
    ]);
    const review: RunRequestInput = {
      goal: 'review',
      universe: { dimension: 'paths', files: [{ path: 'src/a.ts' }] },
      split: {
        worker: 'code-review',
        parts: 1,
        deadlineSeconds: 60,
        budget: { modelCalls: 2, estimatedCostPerCall: 1 },
        hedge: { afterSeconds: 5, mode: 'subdivide', copies: 2 },
      },
      budget: { modelCalls: 10, costLimit: 100 },
    };
    expect(problemsOf(review)).toEqual([{ code: 'invalid_request', path: 'split.hedge.copies' }]);
  });

  it('accepts a replicate hedge on a scope that cannot be split, and a subdivide on one that can', () => {
    expect(problemsOf(crm({ afterSeconds: 5, mode: 'replicate', copies: 8 }))).toEqual([]);
    expect(problemsOf(crm({ afterSeconds: 5, mode: 'subdivide', copies: 3 }))).toEqual([]);
  });

  it('refuses a caller id ending in .h<n> (reserved for copies) and an id too long to suffix', () => {
    expect(problemsOf(crm(undefined, { id: 'CRM.h1' }))).toEqual([{ code: 'invalid_request', path: 'subtasks.0.id' }]);
    expect(problemsOf(crm({ afterSeconds: 5, mode: 'replicate', copies: 2 }, { id: 'X'.repeat(62) }))).toEqual([
      { code: 'invalid_request', path: 'subtasks.0.hedge' },
    ]);
  });
});

describe('when a hedge is due', () => {
  const clock = { dispatchedAtMs: 1_000_000, deadlineMs: 1_000_000 + 25_000, hedge: replicate2, started: false };

  it('counts from the absolute dispatch instant, rounding up so it is never early', () => {
    expect(hedgeWaitSeconds({ ...clock, nowMs: 1_000_000 })).toBe(20);
    expect(hedgeWaitSeconds({ ...clock, nowMs: 1_000_000 + 4_500 })).toBe(16);
    // an iteration that starts late (Map concurrency) hedges at once
    expect(hedgeWaitSeconds({ ...clock, nowMs: 1_000_000 + 21_000 })).toBe(0);
  });

  it('has nothing to wait for without a hedge, once started, or at the deadline', () => {
    expect(hedgeWaitSeconds({ ...clock, hedge: undefined, nowMs: 1_000_000 })).toBeUndefined();
    expect(hedgeWaitSeconds({ ...clock, started: true, nowMs: 1_000_000 })).toBeUndefined();
    expect(hedgeWaitSeconds({ ...clock, nowMs: 1_000_000 + 25_000 })).toBeUndefined();
    expect(hedgeWaitSeconds({ ...clock, deadlineMs: 1_000_000 + 20_000, nowMs: 1_000_000 })).toBeUndefined();
  });

  it('tells the claim when a subdivide original may hand over: the due instant, for a subdivide not yet started and due before the deadline', () => {
    const subdivide = { afterSeconds: 12, mode: 'subdivide', copies: 4 } as const;
    // Dispatched at 1,000 s, due 12 s later: 1,012,000 ms, before the 25-s deadline.
    expect(handoverDueMs({ hedge: subdivide }, 1_000_000, 1_025_000, false)).toBe(1_012_000);
    expect(handoverDueMs({ hedge: subdivide }, 1_000_000, 1_025_000, true)).toBeUndefined();
    expect(handoverDueMs({ hedge: subdivide }, 1_000_000, 1_012_000, false)).toBeUndefined();
    expect(handoverDueMs({ hedge: replicate2 }, 1_000_000, 1_025_000, false)).toBeUndefined();
    expect(handoverDueMs({}, 1_000_000, 1_025_000, false)).toBeUndefined();
  });
});

const subtask = (assigned: Scope, hedge: Hedge): DispatchedSubtask => ({
  id: 'S1',
  worker: 'scout-crm',
  round: 1,
  questionIds: ['q1'],
  required: true,
  justification: 'the answer needs the notes',
  assigned,
  deadline: '2025-06-01T12:00:25.000Z',
  deadlineSeconds: 25,
  budget: { modelCalls: 4, estimatedCostPerCall: 7 },
  hedge,
});

describe('the copies a hedge starts', () => {
  it('replicate: copies - 1 replicas of the same assignment, marked as hedge copies, hedging no further', () => {
    const original = subtask({ ids: ['a', 'b'] }, { afterSeconds: 5, mode: 'replicate', copies: 3 });
    const copies = hedgeCopies(original);
    expect(copies.map((c) => [c.id, c.assigned, c.lineage, c.hedge])).toEqual([
      ['S1.h1', { ids: ['a', 'b'] }, { kind: 'hedge', of: 'S1', mode: 'replicate', copy: 1 }, undefined],
      ['S1.h2', { ids: ['a', 'b'] }, { kind: 'hedge', of: 'S1', mode: 'replicate', copy: 2 }, undefined],
    ]);
    expect(copies.every((c) => c.deadline === original.deadline && c.worker === 'scout-crm' && c.required)).toBe(true);
  });

  it('subdivide: pieces of the scope, by whole days for a date range', () => {
    const original = subtask({ from: '2025-01-01', toExclusive: '2025-01-11' }, { afterSeconds: 5, mode: 'subdivide', copies: 3 });
    expect(hedgeCopies(original).map((c) => [c.id, c.assigned])).toEqual([
      ['S1.h1', { from: '2025-01-01', toExclusive: '2025-01-04' }],
      ['S1.h2', { from: '2025-01-04', toExclusive: '2025-01-07' }],
      ['S1.h3', { from: '2025-01-07', toExclusive: '2025-01-11' }],
    ]);
  });

  it('shares the one allowance: the copies have the figures, not more money', () => {
    expect(hedgeAllowance(subtask({ ids: ['a'] }, replicate2))).toEqual({ modelCalls: 4, cost: 28 });
  });
});

describe('the winner: the first complete cover in commit order', () => {
  const replicated = subtask({ ids: ['a', 'b'] }, { afterSeconds: 5, mode: 'replicate', copies: 3 });
  const divided = subtask({ ids: ['a', 'b', 'c'] }, { afterSeconds: 5, mode: 'subdivide', copies: 3 });

  it('the original or a replica, whichever ok commits first; non-ok results cover nothing', () => {
    expect(
      firstCompleteCover(replicated, [
        { id: 'S1.h2', state: 'ok' },
        { id: 'S1', state: 'ok' },
      ]),
    ).toEqual({ by: 'replica', id: 'S1.h2' });
    expect(
      firstCompleteCover(replicated, [
        { id: 'S1.h1', state: 'invalid' },
        { id: 'S1', state: 'ok' },
      ]),
    ).toEqual({ by: 'original', id: 'S1' });
    expect(
      firstCompleteCover(replicated, [
        { id: 'S1.h1', state: 'timed_out' },
        { id: 'S1', state: 'empty' },
      ]),
    ).toBeUndefined();
  });

  it('pieces win only when every piece is ok; the original may still win before the last piece', () => {
    const pieces = ['S1.h1', 'S1.h2', 'S1.h3'];
    expect(
      firstCompleteCover(
        divided,
        pieces.map((id) => ({ id, state: 'ok' as const })),
      ),
    ).toEqual({ by: 'pieces', ids: pieces });
    expect(
      firstCompleteCover(divided, [
        { id: 'S1.h1', state: 'ok' },
        { id: 'S1.h2', state: 'ok' },
        { id: 'S1', state: 'ok' },
        { id: 'S1.h3', state: 'ok' },
      ]),
    ).toEqual({ by: 'original', id: 'S1' });
    expect(
      firstCompleteCover(divided, [
        { id: 'S1.h1', state: 'ok' },
        { id: 'S1.h2', state: 'empty' },
        { id: 'S1.h3', state: 'ok' },
      ]),
    ).toBeUndefined();
    // an id that is no copy of this subtask (S1.h4 of a 3-piece hedge) covers nothing
    expect(
      firstCompleteCover(divided, [
        { id: 'S1.h1', state: 'ok' },
        { id: 'S1.h2', state: 'ok' },
        { id: 'S1.h4', state: 'ok' },
      ]),
    ).toBeUndefined();
  });
});

/**
 * Pieces always tile the scope. The check is made twice: by the tiling algebra, and by counting
 * from the generator's own integers (every day or id appears in exactly one piece).
 */
describe('subdivide pieces tile the scope (property)', () => {
  const RUNS = { numRuns: 500 };
  const copies = fc.integer({ min: 2, max: 8 });

  it('date ranges: every day in exactly one piece, pieces in order, none empty', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 20_000 }), fc.integer({ min: 1, max: 2_000 }), copies, (startDay, days, n) => {
        fc.pre(days >= n);
        const from = new Date(startDay * DAY).toISOString().slice(0, 10);
        const toExclusive = new Date((startDay + days) * DAY).toISOString().slice(0, 10);
        const pieces = hedgePieces({ from, toExclusive }, n);
        expect(pieces).toHaveLength(n);
        expect(
          checkTiling(
            { dimension: 'time', from, toExclusive },
            pieces.map((scope, i) => ({ id: `p${i}`, scope })),
          ),
        ).toEqual([]);
        const bounds = pieces.map((p) => ('from' in p ? [Date.parse(p.from) / DAY, Date.parse(p.toExclusive) / DAY] : [NaN, NaN]));
        expect(bounds[0]?.[0]).toBe(startDay);
        expect(bounds[n - 1]?.[1]).toBe(startDay + days);
        bounds.forEach(([s, e], i) => {
          expect(e).toBeGreaterThan(s as number);
          if (i > 0) expect(s).toBe(bounds[i - 1]?.[1]);
        });
      }),
      RUNS,
    );
  });

  it('id sets: every id (duplicates in the scope counted once) in exactly one piece', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 300 }), { minLength: 1, maxLength: 120 }), copies, (numbers, n) => {
        const ids = numbers.map((k) => `acc-${k}`);
        const distinct = new Set(ids);
        fc.pre(distinct.size >= n);
        const pieces = hedgePieces({ ids }, n);
        expect(pieces).toHaveLength(n);
        const seen = pieces.flatMap((p) => ('ids' in p ? p.ids : []));
        expect(seen.length).toBe(distinct.size);
        expect(new Set(seen)).toEqual(distinct);
        expect(
          checkTiling(
            { dimension: 'ids', ids: [...distinct] },
            pieces.map((scope, i) => ({ id: `p${i}`, scope })),
          ),
        ).toEqual([]);
      }),
      RUNS,
    );
  });

  it('paths: every file in exactly one piece, with its lines', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 500 }), { minLength: 1, maxLength: 40 }), copies, (numbers, n) => {
        fc.pre(numbers.length >= n);
        const files = numbers.map((k) => (k % 2 === 0 ? { path: `src/f${k}.ts` } : { path: `src/f${k}.ts`, lines: [[1, k] as [number, number]] }));
        const pieces = hedgePieces({ files }, n);
        expect(pieces).toHaveLength(n);
        const seen = pieces.flatMap((p) => ('files' in p ? p.files : []));
        expect(new Set(seen.map((f) => f.path))).toEqual(new Set(files.map((f) => f.path)));
        expect(seen).toHaveLength(files.length);
        expect(
          checkTiling(
            { dimension: 'paths', files },
            pieces.map((scope, i) => ({ id: `p${i}`, scope })),
          ),
        ).toEqual([]);
      }),
      RUNS,
    );
  });
});
