import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BUDGET_LIMITS } from '../../lib/contract';
import { validateRunRequest, withModels } from '../../lib/domain';
import { farFuture, PLAN_OPTIONS, taxRequest, testCatalog } from './fixtures';

const allowance = { deadlineSeconds: 60, budget: { modelCalls: 4, estimatedCostPerCall: 7 } };
const budget = { modelCalls: 40, costLimit: 500 };

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** Any instant the contract can parse, weighted towards the ends of the four-digit years. */
const instant = fc
  .record({
    year: fc.oneof(fc.constantFrom(0, 1, 1970, 2025, 9998, 9999), fc.integer({ min: 0, max: 9999 })),
    month: fc.integer({ min: 1, max: 12 }),
    day: fc.integer({ min: 1, max: 28 }),
    hour: fc.integer({ min: 0, max: 23 }),
    minute: fc.constantFrom(0, 30, 59),
    offset: fc.oneof(
      fc.constant('Z'),
      fc.integer({ min: -14 * 60, max: 14 * 60 }).map((m) => `${m < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(m) / 60), 2)}:${pad(Math.abs(m) % 60, 2)}`),
    ),
  })
  .map(({ year, month, day, hour, minute, offset }) => `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${pad(hour, 2)}:${pad(minute, 2)}:00${offset}`);

const date = fc
  .record({
    year: fc.oneof(fc.constantFrom(0, 9999), fc.integer({ min: 0, max: 9999 })),
    month: fc.integer({ min: 1, max: 12 }),
    day: fc.integer({ min: 1, max: 28 }),
  })
  .map(({ year, month, day }) => `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`);

const point = fc.oneof(instant, date, fc.constantFrom('9999-12-31', '0000-01-01', '9999-12-31T23:59:59.999-14:00', '0000-01-01T00:00:00+14:00'));

const split = fc.oneof(
  fc.integer({ min: 1, max: 40 }).map((parts) => ({ parts })),
  fc.constantFrom('day', 'week', 'month', 'quarter', 'year').map((by) => ({ by })),
  fc.array(point, { minLength: 1, maxLength: 3 }).map((boundaries) => ({ boundaries })),
);

describe('far-future instants', () => {
  it('refuses a universe whose end has no four-digit year in the offset of its start, naming the field', () => {
    expect(validateRunRequest(farFuture, testCatalog, PLAN_OPTIONS)).toEqual({
      ok: false,
      problems: [
        {
          code: 'invalid_request',
          path: 'universe.toExclusive',
          message:
            'is after 9999-12-31 in the offset of from (9999-12-31T00:00:00+00:00); points of a range are written in that offset with four-digit years (got "9999-12-31T23:00:00-12:00")',
        },
      ],
    });
  });

  it('still plans the same range when its start is written in the offset of its end', () => {
    const result = validateRunRequest(
      { ...farFuture, universe: { dimension: 'time', from: '9999-12-30T12:00:00-12:00', toExclusive: '9999-12-31T23:00:00-12:00' } },
      testCatalog,
      PLAN_OPTIONS,
    );
    expect(result.ok && result.subtasks.map((s) => s.assigned)).toEqual([
      { from: '9999-12-30T12:00:00-12:00', toExclusive: '9999-12-31T05:30:00-12:00' },
      { from: '9999-12-31T05:30:00-12:00', toExclusive: '9999-12-31T23:00:00-12:00' },
    ]);
  });

  it("writes a subtask part outside the universe in the subtask's own offset when the universe's has no four-digit year for it", () => {
    const result = validateRunRequest(
      {
        goal: 'g',
        universe: { dimension: 'time', from: '9999-12-31T00:00:00Z', toExclusive: '9999-12-31T12:00:00Z' },
        subtasks: [
          { id: 'A', worker: 'tax-statements', scope: { from: '9999-12-31T00:00:00Z', toExclusive: '9999-12-31T12:00:00Z' }, ...allowance },
          { id: 'B', worker: 'tax-statements', scope: { from: '9999-12-31T12:00:00-12:00', toExclusive: '9999-12-31T13:00:00-12:00' }, ...allowance },
        ],
        budget,
      },
      testCatalog,
      PLAN_OPTIONS,
    );
    expect(result.ok ? [] : result.problems).toEqual([
      {
        code: 'scope_outside_universe',
        path: 'subtasks.1.scope.toExclusive',
        subtaskIds: ['B'],
        from: '9999-12-31T12:00:00-12:00',
        toExclusive: '9999-12-31T13:00:00-12:00',
        message: 'subtask B covers 9999-12-31T12:00:00-12:00..9999-12-31T13:00:00-12:00, outside the universe 9999-12-31T00:00:00Z..9999-12-31T12:00:00Z',
      },
    ]);
  });
});

describe('validateRunRequest never throws', () => {
  it('returns ok or problems for any time universe, split or hand-written subtasks', () => {
    fc.assert(
      fc.property(point, point, split, fc.array(fc.tuple(point, point), { maxLength: 3 }), fc.boolean(), (from, toExclusive, how, scopes, bySplit) => {
        const universe = { dimension: 'time', from, toExclusive };
        const request = bySplit
          ? { goal: 'g', universe, split: { worker: 'tax-statements', ...allowance, ...how }, budget }
          : {
              goal: 'g',
              universe,
              subtasks:
                scopes.length === 0
                  ? [{ id: 'A', worker: 'tax-statements', scope: { from, toExclusive }, ...allowance }]
                  : scopes.map(([f, t], i) => ({ id: `S${i}`, worker: 'tax-statements', scope: { from: f, toExclusive: t }, ...allowance })),
              budget,
            };
        const result = validateRunRequest(request, testCatalog, PLAN_OPTIONS);
        if (!result.ok) expect(result.problems.length).toBeGreaterThan(0);
        for (const problem of result.ok ? [] : result.problems) expect(typeof problem.path).toBe('string');
      }),
      { numRuns: 500 },
    );
  });
});

/** The tax year's four quarters with one subtask's fields replaced. */
const taxWith = (changes: { budget?: unknown; model?: string; runBudget?: unknown }) => {
  const request = taxRequest();
  const [first, ...rest] = request.subtasks ?? [];
  return {
    ...request,
    ...(changes.runBudget === undefined ? {} : { budget: changes.runBudget }),
    subtasks: [
      { ...first, ...(changes.budget === undefined ? {} : { budget: changes.budget }), ...(changes.model === undefined ? {} : { model: changes.model }) },
      ...rest,
    ],
  };
};
const problemsOf = (request: unknown, catalog = testCatalog) => {
  const result = validateRunRequest(request, catalog, PLAN_OPTIONS);
  return result.ok ? [] : result.problems;
};

describe('budgets', () => {
  it('refuses figures the ledger could not keep exactly, naming each field', () => {
    expect(
      problemsOf(taxWith({ budget: { modelCalls: 1_000_000, estimatedCostPerCall: 1e15 }, runBudget: { modelCalls: 2_000_000, costLimit: 2e15 } })),
    ).toEqual([
      { code: 'invalid_request', path: 'subtasks.0.budget.estimatedCostPerCall', message: 'must be at most 1,000,000,000 cost units per call' },
      { code: 'invalid_request', path: 'budget.modelCalls', message: 'must be at most 1,000,000 model calls' },
      { code: 'invalid_request', path: 'budget.costLimit', message: 'must be at most 1,000,000,000,000,000 cost units' },
    ]);
  });

  it('keeps every accepted allowance, and its calls × cost per call, a safe integer within the run budget', () => {
    const figure = fc.oneof(fc.integer({ min: 0, max: 2_000_000 }), fc.constantFrom(1e9, 1e9 + 1, 1e15, 1e16, 2 ** 53, 1.5, -1), fc.double({ noNaN: true }));
    fc.assert(
      fc.property(figure, figure, figure, figure, (calls, perCall, runCalls, costLimit) => {
        const result = validateRunRequest(
          taxWith({ budget: { modelCalls: calls, estimatedCostPerCall: perCall }, runBudget: { modelCalls: runCalls, costLimit } }),
          testCatalog,
          PLAN_OPTIONS,
        );
        if (!result.ok) return;
        for (const { budget } of result.subtasks) {
          const cost = (budget?.modelCalls ?? 0) * (budget?.estimatedCostPerCall ?? 0);
          expect(Number.isSafeInteger(cost)).toBe(true);
          expect(cost).toBeLessThanOrEqual(result.request.budget.costLimit);
          expect(budget?.modelCalls).toBeLessThanOrEqual(result.request.budget.modelCalls);
        }
        expect(result.request.budget.costLimit).toBeLessThanOrEqual(BUDGET_LIMITS.costLimit);
      }),
      { numRuns: 500 },
    );
  });

  it('refuses a subtask allowance larger than the run budget', () => {
    expect(problemsOf(taxWith({ budget: { modelCalls: 50, estimatedCostPerCall: 20 } }))).toEqual([
      { code: 'budget_exceeds_run', path: 'subtasks.0.budget.modelCalls', message: "must not exceed the run's budget.modelCalls (40; got 50)" },
      {
        code: 'budget_exceeds_run',
        path: 'subtasks.0.budget.estimatedCostPerCall',
        message: "50 calls × 20 = 1000 must not exceed the run's budget.costLimit (500)",
      },
    ]);
  });
});

describe('models', () => {
  const catalog = withModels(testCatalog, ['offline', 'offline:broaden']);

  it('refuses a model the deployment does not allow, naming the field and the allowed ones', () => {
    expect(problemsOf(taxWith({ model: 'gpt-4' }), catalog)).toEqual([
      { code: 'unknown_model', path: 'subtasks.0.model', message: 'unknown model gpt-4 (allowed: offline, offline:broaden)' },
    ]);
  });

  it('accepts an allowed model', () => {
    expect(problemsOf(taxWith({ model: 'offline:broaden' }), catalog)).toEqual([]);
  });
});

describe('control characters in free text', () => {
  const message = 'must not contain control characters such as terminal escape sequences, line breaks or bidirectional overrides';

  it('refuses them in the goal and every other text a request carries, naming each field', () => {
    const request = taxRequest();
    const [first, ...rest] = request.subtasks ?? [];
    const problems = problemsOf({
      ...request,
      goal: 'Tax year \u001b[2J\u001b[31mPAID',
      universe: { ...request.universe, field: 'posted\rDate' },
      questions: [{ id: 'q1', text: 'total\u202e?' }],
      subtasks: [{ ...first, justification: 'needed\u0007', model: 'offline\u009b' }, ...rest],
    });
    expect(problems.map((p) => [p.path, p.code, p.message.slice(0, message.length)])).toEqual([
      ['goal', 'invalid_request', message],
      ['universe.field', 'invalid_request', message],
      ['subtasks.0.justification', 'invalid_request', message],
      ['subtasks.0.model', 'invalid_request', message],
      ['questions.0.text', 'invalid_request', message],
    ]);
  });

  it('refuses them in ids and file paths, which statements print', () => {
    const ids = problemsOf({
      goal: 'g',
      universe: { dimension: 'ids', ids: ['a', 'b\u001b[0m'] },
      subtasks: [{ id: 'A', worker: 'scout-crm', scope: { ids: ['a', 'b\u001b[0m'] }, ...allowance }],
      budget,
    });
    expect(ids.map((p) => p.path)).toEqual(['universe.ids.1', 'subtasks.0.scope.ids.1']);
    const paths = problemsOf({
      goal: 'g',
      universe: { dimension: 'paths', files: [{ path: 'src/\u001b]8;;http://x\u0007a.ts' }] },
      split: { worker: 'code-review', parts: 1, ...allowance },
      budget,
    });
    expect(paths.map((p) => p.path)).toEqual(['universe.files.0.path']);
  });

  it('keeps ordinary text, accents and emoji', () => {
    expect(problemsOf({ ...taxRequest(), goal: 'Déductions 2025 — ménage 🧾, “quoted”' })).toEqual([]);
  });
});
