import { describe, expect, it } from 'vitest';
import type { RunRequestInput } from '../../lib/contract';
import { generatedId, validateRunRequest } from '../../lib/domain';
import { PLAN_OPTIONS, rejectionOf, testCatalog } from './fixtures';

const allowance = { deadlineSeconds: 60, budget: { modelCalls: 4, estimatedCostPerCall: 7 } };
const year = { dimension: 'time' as const, from: '2025-01-01', toExclusive: '2026-01-01' };
const budget = { modelCalls: 40, costLimit: 500 };

const validate = (request: unknown) => validateRunRequest(request, testCatalog, PLAN_OPTIONS);
const problemsOf = rejectionOf;

describe('planRun through validateRunRequest', () => {
  it('returns every problem of a bad plan at once, each at its field path', () => {
    const request: RunRequestInput = {
      goal: 'tax',
      universe: year,
      questions: [{ id: 'q1' }, { id: 'q9' }],
      subtasks: [
        { id: 'A', worker: 'tax-statments', questionIds: ['q1'], scope: { from: '2025-01-01', toExclusive: '2025-04-01' }, ...allowance },
        { id: 'B', worker: 'scout-crm', scope: { from: '2025-04-01', toExclusive: '2025-06-28' }, ...allowance },
        { id: 'C', worker: 'tax-statements', scope: { from: '2025-07-01', toExclusive: '2025-10-01' }, ...allowance, deadlineSeconds: 901 },
        { id: 'A', worker: 'tax-statements', scope: { ids: ['2025-Q4'] }, ...allowance },
        { id: 'E', worker: 'tax-statements', scope: { from: '2025-10-01', toExclusive: '2026-02-01' }, ...allowance },
      ],
      budget,
    };

    expect(problemsOf(request)).toEqual([
      {
        code: 'unknown_worker',
        path: 'subtasks.0.worker',
        message:
          'unknown worker kind tax-statments (known: tax-statements, transaction-feed, scout-pricing, scout-packaging, scout-reviews, scout-crm, scout-news, catering-quote, ticket-triage, code-review)',
      },
      { code: 'dimension_mismatch', path: 'subtasks.1.worker', message: 'worker kind scout-crm works on ids scopes but the universe is time' },
      { code: 'deadline_out_of_horizon', path: 'subtasks.2.deadlineSeconds', message: 'must be between 1 and 900 seconds (got 901)' },
      { code: 'duplicate_subtask_id', path: 'subtasks.3.id', subtaskIds: ['A'], message: 'subtask id A is already used by subtasks.0' },
      { code: 'dimension_mismatch', path: 'subtasks.3.scope', subtaskIds: ['A'], message: 'subtask A has an ids scope but the universe is time' },
      {
        code: 'scope_outside_universe',
        path: 'subtasks.4.scope.toExclusive',
        subtaskIds: ['E'],
        from: '2026-01-01',
        toExclusive: '2026-02-01',
        message: 'subtask E covers 2026-01-01..2026-02-01, outside the universe 2025-01-01..2026-01-01',
      },
      {
        code: 'assignment_gap',
        path: 'subtasks.2.scope.from',
        subtaskIds: ['B', 'C'],
        from: '2025-06-28',
        toExclusive: '2025-07-01',
        message: 'no subtask covers 2025-06-28..2025-07-01 (next to B and C)',
      },
      { code: 'unassigned_question', path: 'questions.1.id', message: 'question q9 is not assigned to any subtask' },
    ]);
  });

  it('names a scope written as instants in a date universe', () => {
    const request: RunRequestInput = {
      goal: 'tax',
      universe: year,
      subtasks: [
        { id: 'A', worker: 'tax-statements', scope: { from: '2025-01-01T00:00:00Z', toExclusive: '2025-07-01T00:00:00Z' }, ...allowance },
        { id: 'B', worker: 'tax-statements', scope: { from: '2025-07-01', toExclusive: '2026-01-01' }, ...allowance },
      ],
      budget,
    };
    expect(problemsOf(request)).toEqual([
      { code: 'dimension_mismatch', path: 'subtasks.0.scope', subtaskIds: ['A'], message: 'subtask A must use dates like the universe (both ends)' },
      {
        code: 'assignment_gap',
        path: 'subtasks.1.scope.from',
        subtaskIds: ['B'],
        from: '2025-01-01',
        toExclusive: '2025-07-01',
        message: 'no subtask covers 2025-01-01..2025-07-01 (next to B)',
      },
    ]);
  });

  it("validates the catering inquiry against its kind's input schema", () => {
    const request = (input: Record<string, unknown> | undefined): RunRequestInput => ({
      goal: 'Quote vanilla for the party',
      universe: { dimension: 'ids', ids: ['inquiry-1'] },
      subtasks: [{ id: 'Q', worker: 'catering-quote', scope: { ids: ['inquiry-1'] }, ...(input ? { input } : {}), ...allowance }],
      budget,
    });
    expect(problemsOf(request({ sku: 'SKU-VANILLA', guests: 41.5 }))).toEqual([
      { code: 'invalid_input', path: 'subtasks.0.input.guests', message: 'must be a whole number of guests' },
    ]);
    expect(problemsOf(request(undefined)).map((p) => p.path)).toEqual(['subtasks.0.input.sku', 'subtasks.0.input.guests']);
    expect(validate(request({ sku: 'SKU-VANILLA', guests: 41 })).ok).toBe(true);
  });

  it('refuses ids that look like generated retry or re-check ids', () => {
    const request: RunRequestInput = {
      goal: 'tax',
      universe: year,
      subtasks: [{ id: 'C.r2', worker: 'tax-statements', scope: { from: '2025-01-01', toExclusive: '2026-01-01' }, ...allowance }],
      budget,
    };
    expect(problemsOf(request)).toEqual([
      {
        code: 'invalid_request',
        path: 'subtasks.0.id',
        subtaskIds: ['C.r2'],
        message: 'subtask id C.r2 must not end in .r<n>, .g<n> or .h<n>: those name retries, re-checks and hedge copies',
      },
    ]);
  });

  it('maps schema issues to field paths: justification, budgets, both subtasks and split', () => {
    const request = {
      goal: 'tax',
      universe: year,
      subtasks: [
        {
          id: 'A',
          worker: 'tax-statements',
          scope: { from: '2025-01-01', toExclusive: '2026-01-01' },
          required: true,
          deadlineSeconds: 60,
          budget: { modelCalls: 0, estimatedCostPerCall: 7 },
        },
      ],
      split: { worker: 'tax-statements', parts: 4, ...allowance },
      budget: { modelCalls: 40, costLimit: 0 },
    };
    expect(problemsOf(request)).toEqual([
      { code: 'invalid_request', path: 'subtasks.0.budget.modelCalls', message: 'must be a positive whole number of model calls' },
      { code: 'invalid_request', path: 'subtasks.0.justification', message: 'is required when required is true: say why the answer needs this subtask' },
      { code: 'invalid_request', path: 'budget.costLimit', message: 'must be a positive whole number of cost units' },
      { code: 'invalid_request', path: 'subtasks', message: 'give either subtasks or split, not both and not neither' },
    ]);
  });

  it('rejects a split with an unknown worker and one into more than 10,000 subtasks', () => {
    const ids = Array.from({ length: 10_001 }, (_, i) => `t-${i}`);
    expect(
      problemsOf({ goal: 'g', universe: { dimension: 'ids', ids }, split: { worker: 'nobody', chunkSize: 1, ...allowance }, budget }).map((p) => [
        p.code,
        p.path,
      ]),
    ).toEqual([
      ['unknown_worker', 'split.worker'],
      ['plan_too_large', 'split'],
    ]);
  });

  it('dispatches round-1 subtasks with everything the request fixed, and no deadline yet', () => {
    const result = validate({
      goal: 'tax',
      universe: year,
      questions: [{ id: 'q1' }],
      split: {
        worker: 'tax-statements',
        by: 'quarter',
        questionIds: ['q1'],
        required: true,
        justification: 'every quarter counts',
        model: 'offline',
        ...allowance,
      },
      budget,
    });
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    expect(result.subtasks[0]).toEqual({
      id: 'A',
      worker: 'tax-statements',
      round: 1,
      questionIds: ['q1'],
      required: true,
      justification: 'every quarter counts',
      assigned: { from: '2025-01-01', toExclusive: '2025-04-01' },
      deadlineSeconds: 60,
      budget: { modelCalls: 4, estimatedCostPerCall: 7 },
      model: 'offline',
    });
    expect(result.subtasks.map((s) => s.id)).toEqual(['A', 'B', 'C', 'D']);
  });

  it('refuses questionIds of a request that declares no questions, naming each entry, and plans nothing', () => {
    const split = { worker: 'tax-statements', by: 'quarter', questionIds: ['q1', 'q2'], required: true, justification: 'every quarter counts', ...allowance };
    const result = validate({ goal: 'tax', universe: year, split, budget });
    expect(result).toEqual({
      ok: false,
      problems: [
        { code: 'unknown_question', path: 'split.questionIds.0', message: 'names question q1, but the request declares no questions: declare it in questions' },
        { code: 'unknown_question', path: 'split.questionIds.1', message: 'names question q2, but the request declares no questions: declare it in questions' },
      ],
    });
    // Declaring them is all it takes; naming one twice is refused at the second place.
    expect(validate({ goal: 'tax', universe: year, questions: [{ id: 'q1' }, { id: 'q2' }], split, budget }).ok).toBe(true);
    const twice = validate({ goal: 'tax', universe: year, questions: [{ id: 'q1' }], split: { ...split, questionIds: ['q1', 'q1'] }, budget });
    expect(twice).toEqual({
      ok: false,
      problems: [{ code: 'duplicate_question', path: 'split.questionIds.1', message: 'names question q1 twice (also at split.questionIds.0)' }],
    });
  });

  it('splits ids and files into near-equal parts in the order the universe lists them, larger parts last', () => {
    const assigned = (request: unknown) => {
      const result = validate(request);
      return result.ok ? result.subtasks.map((s) => [s.id, s.assigned]) : result.problems;
    };
    const split = { deadlineSeconds: 10, budget: { modelCalls: 1, estimatedCostPerCall: 1 } };
    expect(
      assigned({
        goal: 'g',
        universe: { dimension: 'ids', ids: ['t-5', 't-1', 't-4', 't-2', 't-3'] },
        split: { worker: 'ticket-triage', parts: 2, ...split },
        budget,
      }),
    ).toEqual([
      ['A', { ids: ['t-5', 't-1'] }],
      ['B', { ids: ['t-4', 't-2', 't-3'] }],
    ]);
    expect(
      assigned({
        goal: 'g',
        universe: { dimension: 'paths', files: [{ path: 'a.ts' }, { path: 'b.ts', lines: [[1, 9]] }, { path: 'c.ts' }] },
        split: { worker: 'code-review', parts: 2, ...split },
        budget,
      }),
    ).toEqual([
      ['A', { files: [{ path: 'a.ts' }] }],
      ['B', { files: [{ path: 'b.ts', lines: [[1, 9]] }, { path: 'c.ts' }] }],
    ]);
  });

  it('letters generated ids A…Z, then AA, AB…, and numbers them after a prefix', () => {
    expect([0, 25, 26, 27, 51, 52, 701, 702].map((i) => generatedId(i))).toEqual(['A', 'Z', 'AA', 'AB', 'AZ', 'BA', 'ZZ', 'AAA']);
    expect(generatedId(9, 'chunk-')).toBe('chunk-10');
  });
});

describe('a request that asks for synthesis', () => {
  const quarters = ['2025-01-01', '2025-04-01', '2025-07-01', '2025-10-01', '2026-01-01'];
  const request = (synthesis: unknown): unknown => ({
    goal: 'tax',
    universe: year,
    subtasks: quarters
      .slice(0, 4)
      .map((from, i) => ({ id: `Q${i + 1}`, worker: 'tax-statements', scope: { from, toExclusive: quarters[i + 1] }, ...allowance })),
    budget,
    synthesis,
  });

  it('is planned when its allowance fits the run budget', () => {
    expect(validate(request({ budget: { modelCalls: 2, estimatedCostPerCall: 7 } })).ok).toBe(true);
  });

  it('is refused, naming synthesis.budget, when its allowance exceeds the run budget (41 calls of 40; 41 × 13 = 533 of 500)', () => {
    expect(problemsOf(request({ budget: { modelCalls: 41, estimatedCostPerCall: 13 } }))).toEqual([
      { code: 'budget_exceeds_run', path: 'synthesis.budget.modelCalls', message: "must not exceed the run's budget.modelCalls (40; got 41)" },
      {
        code: 'budget_exceeds_run',
        path: 'synthesis.budget.estimatedCostPerCall',
        message: "41 calls × 13 = 533 must not exceed the run's budget.costLimit (500)",
      },
    ]);
  });
});
