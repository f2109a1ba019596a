import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseTimePoint, type RunRequestInput } from '../../lib/contract';
import { formatTimePoint, readTimePoint, reconcile, timeAlgebra, validateRunRequest } from '../../lib/domain';
import { manifestOf, okTime, PLAN_OPTIONS, testCatalog } from './fixtures';

const request = (universe: { from: string; toExclusive: string }, split: Record<string, unknown>): RunRequestInput => ({
  goal: 'calendar',
  universe: { dimension: 'time', ...universe },
  split: { worker: 'tax-statements', deadlineSeconds: 30, budget: { modelCalls: 1, estimatedCostPerCall: 1 }, ...split },
  budget: { modelCalls: 10, costLimit: 10 },
});

/** The `[from, toExclusive]` pairs a split generates, or the problems that stop it. */
const tiling = (universe: { from: string; toExclusive: string }, split: Record<string, unknown>) => {
  const result = validateRunRequest(request(universe, split), testCatalog, PLAN_OPTIONS);
  return result.ok ? result.subtasks.map((s) => ('from' in s.assigned ? [s.assigned.from, s.assigned.toExclusive] : [])) : result.problems;
};

describe('time points', () => {
  it('accepts the leap day 2024-02-29 and rejects 2025-02-29, naming the field', () => {
    expect(readTimePoint('2024-02-29')?.ms).toBe(Date.UTC(2024, 1, 29));
    expect(readTimePoint('2025-02-29')).toBeUndefined();

    const result = validateRunRequest({ ...request({ from: '2025-02-29', toExclusive: '2025-04-01' }, { parts: 1 }) }, testCatalog, PLAN_OPTIONS);
    expect(result).toEqual({
      ok: false,
      problems: [
        {
          code: 'invalid_request',
          path: 'universe.from',
          message: 'must be an ISO date (YYYY-MM-DD) or an ISO instant with an offset, on a real calendar day (got "2025-02-29")',
        },
      ],
    });
  });

  it('rejects 30 April 31st, 1900-02-29 (not a leap year) and hour 24, and accepts 2000-02-29', () => {
    expect(['2025-04-31', '1900-02-29', '2025-01-01T24:00:00Z', '2025-01-01T10:00:00+15:00', '2025-01-01T10:00'].map(readTimePoint)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(readTimePoint('2000-02-29')?.ms).toBe(Date.UTC(2000, 1, 29));
  });

  it('reads instants in their offset and writes them back the way they were written', () => {
    const point = readTimePoint('2025-02-01T00:00:00+02:00');
    expect(point).toEqual({ ms: Date.UTC(2025, 0, 31, 22), form: 'instant', offsetMinutes: 120, zulu: false });
    expect(formatTimePoint(Date.UTC(2025, 0, 31, 22), { form: 'instant', offsetMinutes: 120, zulu: false })).toBe('2025-02-01T00:00:00+02:00');
    expect(formatTimePoint(Date.UTC(2025, 0, 1, 5, 30, 0, 250), { form: 'instant', offsetMinutes: -330, zulu: false })).toBe('2025-01-01T00:00:00.250-05:30');
    expect(formatTimePoint(Date.UTC(2025, 0, 1), { form: 'instant', offsetMinutes: 0, zulu: true })).toBe('2025-01-01T00:00:00Z');
  });

  it('places years before 100 correctly (Date.UTC would move them to the 1900s)', () => {
    expect(readTimePoint('0050-03-01')?.ms).toBe(Date.parse('0050-03-01T00:00:00Z'));
    expect(formatTimePoint(Date.parse('0050-03-01T00:00:00Z'), { form: 'date', offsetMinutes: 0, zulu: false })).toBe('0050-03-01');
  });

  it('agrees with the contract parser on validity and value for every generated string', () => {
    const two = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, '0'));
    const date = fc.tuple(fc.integer({ min: 1000, max: 9999 }), two(13), two(32)).map(([y, m, d]) => `${y}-${m}-${d}`);
    const zone = fc.oneof(
      fc.constant('Z'),
      fc.tuple(fc.constantFrom('+', '-'), two(15), two(60)).map(([s, h, m]) => `${s}${h}:${m}`),
    );
    const clock = fc
      .tuple(two(24), two(60), fc.option(two(60)), fc.option(fc.integer({ min: 0, max: 9999 }).map(String)))
      .map(([h, m, s, f]) => `${h}:${m}${s === null ? '' : `:${s}${f === null ? '' : `.${f}`}`}`);
    const text = fc.oneof(
      date,
      fc.tuple(date, clock, zone).map(([d, c, z]) => `${d}T${c}${z}`),
    );

    fc.assert(
      fc.property(text, (value) => {
        const ours = readTimePoint(value);
        const contract = parseTimePoint(value);
        expect(ours === undefined).toBe(contract === undefined);
        if (ours && contract) expect([ours.ms, ours.form, ours.offsetMinutes]).toEqual([contract.ms, contract.form, contract.offsetMinutes]);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('calendar splits', () => {
  const year2025 = { from: '2025-01-01', toExclusive: '2026-01-01' };

  it('splits 2025 by quarter into four exact ranges', () => {
    expect(tiling(year2025, { by: 'quarter' })).toEqual([
      ['2025-01-01', '2025-04-01'],
      ['2025-04-01', '2025-07-01'],
      ['2025-07-01', '2025-10-01'],
      ['2025-10-01', '2026-01-01'],
    ]);
  });

  it('splits by month at real month ends, with partial first and last months and leap February', () => {
    expect(tiling({ from: '2024-01-15', toExclusive: '2024-04-10' }, { by: 'month' })).toEqual([
      ['2024-01-15', '2024-02-01'],
      ['2024-02-01', '2024-03-01'],
      ['2024-03-01', '2024-04-01'],
      ['2024-04-01', '2024-04-10'],
    ]);
  });

  it('splits an instant range by month at midnight in its own +02:00 offset', () => {
    expect(tiling({ from: '2025-01-15T00:00:00+02:00', toExclusive: '2025-03-10T12:00:00+02:00' }, { by: 'month' })).toEqual([
      ['2025-01-15T00:00:00+02:00', '2025-02-01T00:00:00+02:00'],
      ['2025-02-01T00:00:00+02:00', '2025-03-01T00:00:00+02:00'],
      ['2025-03-01T00:00:00+02:00', '2025-03-10T12:00:00+02:00'],
    ]);
  });

  it('splits by ISO week (Monday), by day across the leap day, and by year', () => {
    expect(tiling({ from: '2025-01-01', toExclusive: '2025-01-20' }, { by: 'week' })).toEqual([
      ['2025-01-01', '2025-01-06'],
      ['2025-01-06', '2025-01-13'],
      ['2025-01-13', '2025-01-20'],
    ]);
    expect(tiling({ from: '2024-02-27', toExclusive: '2024-03-02' }, { by: 'day' })).toEqual([
      ['2024-02-27', '2024-02-28'],
      ['2024-02-28', '2024-02-29'],
      ['2024-02-29', '2024-03-01'],
      ['2024-03-01', '2024-03-02'],
    ]);
    expect(tiling({ from: '2023-07-01', toExclusive: '2025-03-01' }, { by: 'year' })).toEqual([
      ['2023-07-01', '2024-01-01'],
      ['2024-01-01', '2025-01-01'],
      ['2025-01-01', '2025-03-01'],
    ]);
  });

  it('cuts 365 days into four near-equal whole-day parts', () => {
    expect(tiling(year2025, { parts: 4 })).toEqual([
      ['2025-01-01', '2025-04-02'],
      ['2025-04-02', '2025-07-02'],
      ['2025-07-02', '2025-10-01'],
      ['2025-10-01', '2026-01-01'],
    ]);
  });

  it('cuts an instant range to the millisecond', () => {
    expect(tiling({ from: '2025-01-01T00:00:00Z', toExclusive: '2025-01-01T00:00:03Z' }, { parts: 2 })).toEqual([
      ['2025-01-01T00:00:00Z', '2025-01-01T00:00:01.500Z'],
      ['2025-01-01T00:00:01.500Z', '2025-01-01T00:00:03Z'],
    ]);
  });

  it('refuses more parts than days, and more than 10000 subtasks by day', () => {
    expect(tiling({ from: '2025-01-01', toExclusive: '2025-01-04' }, { parts: 4 })).toEqual([
      { code: 'plan_too_large', path: 'split.parts', message: 'cannot cut 3 days into 4 whole parts' },
    ]);
    // 1990 to 2020 is 30 × 365 days plus 7 leap days (1992 … 2016): 10,957 days, past 10,000.
    expect(tiling({ from: '1990-01-01', toExclusive: '2020-01-01' }, { by: 'day' })).toEqual([
      { code: 'plan_too_large', path: 'split.by', message: 'splitting by day makes more than 10000 subtasks' },
    ]);
  });

  it('splits at explicit boundaries, and names every bad one', () => {
    expect(tiling(year2025, { boundaries: ['2025-04-01', '2025-07-01'] })).toEqual([
      ['2025-01-01', '2025-04-01'],
      ['2025-04-01', '2025-07-01'],
      ['2025-07-01', '2026-01-01'],
    ]);
    expect(tiling(year2025, { boundaries: ['2025-07-01', '2025-04-01', '2026-02-01', '2025-05-01T00:00:00Z'] })).toEqual([
      { code: 'invalid_request', path: 'split.boundaries.1', message: 'must be after the previous boundary 2025-07-01 (got 2025-04-01)' },
      { code: 'scope_outside_universe', path: 'split.boundaries.2', message: 'must lie strictly inside the universe 2025-01-01..2026-01-01 (got 2026-02-01)' },
      { code: 'dimension_mismatch', path: 'split.boundaries.3', message: 'must be an ISO date like the universe (got 2025-05-01T00:00:00Z)' },
    ]);
  });

  it('names split fields that do not apply to time', () => {
    expect(tiling(year2025, { chunkSize: 10 })).toEqual([
      { code: 'dimension_mismatch', path: 'split.chunkSize', message: 'does not apply to a time universe' },
    ]);
  });

  it('uses idPrefix for generated ids', () => {
    const result = validateRunRequest(request(year2025, { by: 'quarter', idPrefix: 'Q' }), testCatalog, PLAN_OPTIONS);
    expect(result.ok && result.subtasks.map((s) => s.id)).toEqual(['Q1', 'Q2', 'Q3', 'Q4']);
  });
});

describe('time algebra', () => {
  const range = (from: string, toExclusive: string) => timeAlgebra.normalise({ from, toExclusive });

  it('unions, intersects and subtracts half-open ranges, writing results back as dates', () => {
    const h1 = range('2025-01-01', '2025-07-01');
    const q2 = range('2025-04-01', '2025-07-01');
    const march = range('2025-03-01', '2025-04-01');
    expect(timeAlgebra.toScopes(timeAlgebra.difference(h1, range('2025-02-01', '2025-03-01')))).toEqual([
      { from: '2025-01-01', toExclusive: '2025-02-01' },
      { from: '2025-03-01', toExclusive: '2025-07-01' },
    ]);
    expect(timeAlgebra.toScopes(timeAlgebra.union(march, q2))).toEqual([{ from: '2025-03-01', toExclusive: '2025-07-01' }]);
    expect(timeAlgebra.toScopes(timeAlgebra.intersect(h1, range('2025-06-28', '2025-08-01')))).toEqual([{ from: '2025-06-28', toExclusive: '2025-07-01' }]);
    expect([timeAlgebra.overlaps(march, q2), timeAlgebra.overlaps(h1, march)]).toEqual([false, true]);
    expect(timeAlgebra.isEmpty(timeAlgebra.difference(q2, h1))).toBe(true);
  });

  it('describes ranges inclusively for people and half-open for problems', () => {
    expect(timeAlgebra.describe(range('2025-06-28', '2025-07-01'))).toBe('2025-06-28 to 2025-06-30');
    expect(timeAlgebra.describe(range('2025-06-28', '2025-06-29'))).toBe('2025-06-28');
    expect(timeAlgebra.describe(range('2025-06-28', '2025-07-01'), 'exact')).toBe('2025-06-28..2025-07-01');
    expect(timeAlgebra.describe(range('2025-06-01T00:00:00+02:00', '2025-06-02T00:00:00+02:00'))).toBe(
      '2025-06-01T00:00:00+02:00 until 2025-06-02T00:00:00+02:00',
    );
  });

  it('rejects an inverted range naming toExclusive, and a scope of another dimension', () => {
    expect(() => range('2025-07-01', '2025-04-01')).toThrow('toExclusive must be after from (2025-07-01) (got "2025-04-01")');
    expect(() => timeAlgebra.normalise({ ids: ['a'] })).toThrow('expected a time scope, got ids');
  });
});

describe('observed coverage of instant universes: each record covers the second it starts', () => {
  const day = { dimension: 'time' as const, from: '2025-06-01T00:00:00+02:00', toExclusive: '2025-06-02T00:00:00+02:00' };
  const manifest = manifestOf({
    universe: day,
    subtasks: [{ id: 'A', worker: 'tax-statements', round: 1, assigned: { from: day.from, toExclusive: day.toExclusive } }],
  });

  it('counts a last record at 23:59:59 as reaching the end of the day', () => {
    expect(reconcile(manifest, [okTime('A', '2025-06-01T00:00:00+02:00', '2025-06-01T23:59:59+02:00', 40)]).problems).toEqual([]);
  });

  it('reports a gap from the second after the last record, in the universe offset', () => {
    const { observedGaps } = reconcile(manifest, [okTime('A', '2025-05-31T22:00:00Z', '2025-06-01T16:00:00Z', 40)]);
    expect(observedGaps).toEqual([
      {
        subtaskId: 'A',
        worker: 'tax-statements',
        number: 1,
        code: 'observed_ends_early',
        region: { from: '2025-06-01T18:00:01+02:00', toExclusive: '2025-06-02T00:00:00+02:00' },
      },
    ]);
  });
});
