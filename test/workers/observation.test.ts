import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRegistry, fileSource, idsRecorder, keyedSource, pathsRecorder, timeRecorder, timeSeriesSource } from '../../lib/workers';
import { statementsSource } from '../../examples/app';
import { runWith, testKind } from './support/harness';

const Q2 = { from: '2025-04-01', toExclusive: '2025-07-01' } as const;

/**
 * A worker that reads the statements and then reports the brief back, as the tax example's worker B
 * did ("Reviewed April–June"), even inventing an observed block of its own.
 */
const echoTheBrief = testKind({
  kind: 'echo-the-brief',
  dimension: 'time',
  output: z.object({ reviewed: z.object({ from: z.string(), toExclusive: z.string() }), observed: z.unknown() }),
  sources: { statements: statementsSource },
  run: async (ctx) => {
    await ctx.tools.statements();
    return {
      reviewed: { from: ctx.assignment.scope.from, toExclusive: ctx.assignment.scope.toExclusive },
      observed: { minDate: '2025-04-01', maxDate: '2025-06-30', recordCount: 999 },
    };
  },
});

/** Reads only April of its quarter. */
const readsApril = testKind({
  kind: 'reads-april',
  dimension: 'time',
  output: z.object({ rows: z.int() }),
  sources: { statements: statementsSource },
  run: async (ctx) => ({ rows: (await ctx.tools.statements({ from: '2025-04-01', toExclusive: '2025-05-01' })).length }),
});

const registry = createRegistry([echoTheBrief, readsApril]);

describe('observed coverage is derived by the tool layer', () => {
  it('reports the rows a brief-echoing worker processed: June ends on 2025-06-27, not the 30th', async () => {
    const outcome = await runWith(registry, { id: 'B', worker: 'echo-the-brief', assigned: Q2 });
    // Six transactions a month in the fixture, three statements in the quarter.
    expect(outcome.observed).toEqual({ minDate: '2025-04-01', maxDate: '2025-06-27', recordCount: 18 });
    expect(outcome.sources).toEqual(['stmt-2025-04', 'stmt-2025-05', 'stmt-2025-06']);
    expect(outcome.sourcesReached).toBe(3);
    expect(outcome.state).toBe('ok');
  });

  it('reports only what was fetched when a worker reads part of its range', async () => {
    const outcome = await runWith(registry, { id: 'B', worker: 'reads-april', assigned: Q2 });
    expect(outcome.observed).toEqual({ minDate: '2025-04-01', maxDate: '2025-04-30', recordCount: 6 });
    expect(outcome.sources).toEqual(['stmt-2025-04']);
  });
});

describe('timeRecorder', () => {
  it('counts a record fetched twice once', () => {
    const recorder = timeRecorder();
    recorder.record('t1', Date.UTC(2025, 3, 1), '2025-04-01');
    recorder.record('t2', Date.UTC(2025, 5, 27), '2025-06-27');
    recorder.record('t1', Date.UTC(2025, 3, 1), '2025-04-01');
    expect(recorder.observed()).toEqual({ minDate: '2025-04-01', maxDate: '2025-06-27', recordCount: 2 });
  });

  it('reports nulls and zero when nothing was recorded', () => {
    expect(timeRecorder().observed()).toEqual({ minDate: null, maxDate: null, recordCount: 0 });
  });
});

describe('time-series tools keep and record exactly the records inside the request', () => {
  const DAY = 86_400_000;
  const YEAR_START = Date.UTC(2025, 0, 1);
  const iso = (day: number) => new Date(YEAR_START + day * DAY).toISOString().slice(0, 10);
  const daysOf = (days: readonly number[]) => days.map((day, index) => ({ id: `r${index}`, date: iso(day) }));

  it('matches a direct min/max/count over the kept rows, for any rows and any assignment', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 364 }), { maxLength: 40 }),
        fc.integer({ min: 0, max: 363 }),
        fc.integer({ min: 1, max: 365 }),
        async (days, start, length) => {
          const end = Math.min(365, start + length);
          const rows = daysOf(days);
          const kind = testKind({
            kind: 'reads-all',
            dimension: 'time',
            output: z.object({ ids: z.array(z.string()) }),
            // The source ignores the range on purpose: filtering is the tool layer's job.
            sources: {
              rows: timeSeriesSource<{ id: string; date: string }>({
                description: 'rows',
                dateField: 'date',
                idField: 'id',
                load: async () => [{ source: 'all', rows }],
              }),
            },
            run: async (ctx) => ({ ids: (await ctx.tools.rows()).map((row) => row.id) }),
          });
          const outcome = await runWith(
            createRegistry([kind]),
            { id: 'P', worker: 'reads-all', assigned: { from: iso(start), toExclusive: iso(end) } },
            { calls: 1 },
          );
          const inside = days.filter((day) => day >= start && day < end);
          expect(outcome.observed).toEqual({
            minDate: inside.length === 0 ? null : iso(Math.min(...inside)),
            maxDate: inside.length === 0 ? null : iso(Math.max(...inside)),
            recordCount: inside.length,
          });
          expect(outcome.state).toBe(inside.length === 0 ? 'empty' : 'ok');
        },
      ),
      { numRuns: 200 },
    );
  });

  it('writes instants observed in a date assignment as the UTC day', async () => {
    const kind = testKind({
      kind: 'instant-rows',
      dimension: 'time',
      output: z.object({ n: z.int() }),
      sources: {
        events: timeSeriesSource<{ id: string; at: string }>({
          description: 'events',
          dateField: 'at',
          idField: 'id',
          load: async () => [
            {
              source: 'log',
              rows: [
                { id: 'a', at: '2025-06-27T23:30:00+02:00' },
                { id: 'b', at: '2025-06-30T23:59:59Z' },
                { id: 'c', at: '2025-07-01T00:30:00+02:00' },
              ],
            },
          ],
        }),
      },
      run: async (ctx) => ({ n: (await ctx.tools.events()).length }),
    });
    const outcome = await runWith(
      createRegistry([kind]),
      { id: 'E', worker: 'instant-rows', assigned: { from: '2025-06-01', toExclusive: '2025-07-01' } },
      { calls: 1 },
    );
    // 23:30 at +02:00 on the 27th is 21:30 UTC the same day; 00:30 at +02:00 on 1 July is 30 June UTC.
    expect(outcome.observed).toEqual({ minDate: '2025-06-27', maxDate: '2025-06-30', recordCount: 3 });
  });
});

describe('a source with an unreadable record', () => {
  it('makes the call fail and records nothing from it', async () => {
    const kind = testKind({
      kind: 'bad-dates',
      dimension: 'time',
      output: z.object({ n: z.int() }),
      sources: {
        rows: timeSeriesSource<{ id: string; date: string }>({
          description: 'rows',
          dateField: 'date',
          idField: 'id',
          load: async () => [
            {
              source: 'ledger-export',
              rows: [
                { id: 'a', date: '2025-06-01' },
                { id: 'b', date: '2025-06-31' },
              ],
            },
          ],
        }),
      },
      run: async (ctx) => ({ n: (await ctx.tools.rows()).length }),
    });
    const outcome = await runWith(createRegistry([kind]), { id: 'D', worker: 'bad-dates', assigned: { from: '2025-06-01', toExclusive: '2025-07-01' } });
    // 31 June does not exist, so the batch cannot be observed at all.
    expect(outcome).toMatchObject({ state: 'invalid', reason: 'worker threw SourceDataError', observed: { recordCount: 0 }, sourcesReached: 0 });
  });
});

describe('idsRecorder', () => {
  it('observes an id only when it yielded records, and counts a re-read once', () => {
    const recorder = idsRecorder();
    recorder.record('web:pricing', 2);
    recorder.record('web:pricing', 2);
    recorder.record('reviews:g2', 0);
    expect(recorder.observed()).toEqual({ ids: ['web:pricing'], recordCount: 2 });
  });
});

describe('pathsRecorder', () => {
  it('merges touching line ranges per file and counts distinct lines', () => {
    const recorder = pathsRecorder();
    recorder.recordLines('src/b.ts', [41, 80]);
    recorder.recordLines('src/b.ts', [1, 40]);
    recorder.recordLines('src/b.ts', [100, 110]);
    recorder.recordWholeFile('src/a.ts', 12);
    // 80 + 11 lines of b, and the 12 lines of a read whole.
    expect(recorder.observed()).toEqual({
      files: [
        { path: 'src/a.ts' },
        {
          path: 'src/b.ts',
          lines: [
            [1, 80],
            [100, 110],
          ],
        },
      ],
      recordCount: 103,
    });
  });
});

describe('keyed and file tools record what they returned', () => {
  const files: Record<string, string[]> = { 'src/a.ts': ['a1', 'a2', 'a3'], 'src/b.ts': Array.from({ length: 200 }, (_, i) => `b${i + 1}`) };
  const reviewer = testKind({
    kind: 'reviewer',
    dimension: 'paths',
    output: z.object({ lines: z.int() }),
    sources: { repo: fileSource({ description: 'files', load: async (path) => files[path] ?? [] }) },
    run: async (ctx) => {
      const whole = await ctx.tools.repo({ path: 'src/a.ts' });
      const part = await ctx.tools.repo({ path: 'src/b.ts', lines: [1, 120] });
      return { lines: whole.length + part.length };
    },
  });
  const lookup = testKind({
    kind: 'lookup',
    dimension: 'ids',
    output: z.object({ n: z.int() }),
    sources: {
      ticket: keyedSource({
        description: 'one ticket',
        args: z.object({ id: z.string() }),
        idOf: (args) => args.id,
        load: async ({ id }) => ({ source: `tracker:${id}`, rows: id === 'T-2' ? [] : [{ id }] }),
      }),
    },
    run: async (ctx) => {
      let n = 0;
      for (const id of ctx.assignment.scope.ids) n += (await ctx.tools.ticket({ id })).length;
      return { n };
    },
  });
  const both = createRegistry([reviewer, lookup]);

  it('records a whole file without lines and a range as read', async () => {
    const outcome = await runWith(
      both,
      { id: 'R', worker: 'reviewer', assigned: { files: [{ path: 'src/a.ts' }, { path: 'src/b.ts', lines: [[1, 120]] }] } },
      { calls: 1 },
    );
    expect(outcome.observed).toEqual({ files: [{ path: 'src/a.ts' }, { path: 'src/b.ts', lines: [[1, 120]] }], recordCount: 123 });
    expect(outcome.sources).toEqual(['src/a.ts', 'src/b.ts']);
  });

  it('reaches a source that had nothing without observing its id', async () => {
    const outcome = await runWith(both, { id: 'L', worker: 'lookup', assigned: { ids: ['T-1', 'T-2'] } }, { calls: 1 });
    expect(outcome.observed).toEqual({ ids: ['T-1'], recordCount: 1 });
    expect(outcome.sourcesReached).toBe(2);
  });
});
