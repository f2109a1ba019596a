import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateRunRequest } from '../../lib/domain';
import { farFuture, PLAN_OPTIONS, testCatalog } from './fixtures';

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
    offset: fc.oneof(fc.constant('Z'), fc.integer({ min: -14 * 60, max: 14 * 60 }).map((m) => `${m < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(m) / 60), 2)}:${pad(Math.abs(m) % 60, 2)}`)),
  })
  .map(({ year, month, day, hour, minute, offset }) => `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${pad(hour, 2)}:${pad(minute, 2)}:00${offset}`);

const date = fc
  .record({ year: fc.oneof(fc.constantFrom(0, 9999), fc.integer({ min: 0, max: 9999 })), month: fc.integer({ min: 1, max: 12 }), day: fc.integer({ min: 1, max: 28 }) })
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

  it('writes a subtask part outside the universe in the subtask\'s own offset when the universe\'s has no four-digit year for it', () => {
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
              subtasks: scopes.length === 0 ? [{ id: 'A', worker: 'tax-statements', scope: { from, toExclusive }, ...allowance }] : scopes.map(([f, t], i) => ({ id: `S${i}`, worker: 'tax-statements', scope: { from: f, toExclusive: t }, ...allowance })),
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
