import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRegistry, defineWorker, fileSource, ScopeViolation, type TimeRangeRequest } from '../../lib/workers';
import { quoteSource, referenceRegistry, statementsSource } from '../../examples/app';
import { runWith, testKind } from './support/harness';

const Q2 = { from: '2025-04-01', toExclusive: '2025-07-01' } as const;

/** Asks for `wider` first, catches the refusal, then reads its own range. */
const widening = (wider: TimeRangeRequest) =>
  testKind({
    kind: 'widening',
    dimension: 'time',
    output: z.object({ rows: z.int(), refusedWith: z.string() }),
    sources: { statements: statementsSource },
    run: async (ctx) => {
      let refusedWith = 'nothing';
      try {
        await ctx.tools.statements(wider);
      } catch (error) {
        if (!(error instanceof ScopeViolation)) throw error;
        refusedWith = error.name;
      }
      return { rows: (await ctx.tools.statements()).length, refusedWith };
    },
  });

/** Asks the quote tool directly for another inquiry and lets the refusal escape. */
const otherInquiry = (request: unknown) =>
  defineWorker({
    kind: 'other-inquiry',
    dimension: 'ids',
    label: 'catalogue',
    recordNoun: 'quotes',
    input: z.object({ sku: z.string(), guests: z.int() }),
    output: z.object({ quotes: z.int() }),
    sources: { catering_quote: quoteSource },
    merge: () => ({}),
    run: async (ctx) => ({ quotes: (await ctx.tools.catering_quote(request)).length }),
  });

describe('time-series tools refuse ranges outside the assignment', () => {
  it("refuses the tax example's March-to-June request for an April-to-June assignment and records it", async () => {
    const outcome = await runWith(createRegistry([widening({ from: '2025-03-01', toExclusive: '2025-07-01' })]), { id: 'B', worker: 'widening', assigned: Q2 });
    expect(outcome.refusals).toEqual([{ tool: 'statements', requested: '2025-03-01..2025-07-01', reason: 'outside the assignment 2025-04-01..2025-07-01' }]);
    expect(outcome.findings).toEqual({ rows: 18, refusedWith: 'ScopeViolation' });
    // The refused request fetched nothing: March is not in the observation.
    expect(outcome.observed).toEqual({ minDate: '2025-04-01', maxDate: '2025-06-27', recordCount: 18 });
    expect(outcome.state).toBe('ok');
  });

  it('refuses a range that runs past the end by one day', async () => {
    const outcome = await runWith(createRegistry([widening({ from: '2025-04-01', toExclusive: '2025-07-02' })]), { id: 'B', worker: 'widening', assigned: Q2 });
    expect(outcome.refusals).toHaveLength(1);
    expect(outcome.refusals?.[0]?.requested).toBe('2025-04-01..2025-07-02');
  });
});

describe('the catering tool accepts only the assigned inquiry', () => {
  const inquiry = { sku: 'SKU-VANILLA', guests: 41 };
  const assigned = { ids: ['SKU-VANILLA'] };

  it.each([
    ['another SKU', { sku: 'SKU-CHOCOLATE', guests: 41 }, 'SKU-CHOCOLATE is not assigned (assigned: SKU-VANILLA)'],
    ['another guest count', { sku: 'SKU-VANILLA', guests: 42 }, 'only the assigned inquiry {"sku":"SKU-VANILLA","guests":41} may be requested'],
    [
      'a guest count the schema refuses',
      { sku: 'SKU-VANILLA', guests: 2.5 },
      'arguments do not match the tool: guests Invalid input: expected int, received number',
    ],
  ])('refuses %s and the outcome records the refusal', async (_, request, reason) => {
    const outcome = await runWith(createRegistry([otherInquiry(request)]), { id: 'Q', worker: 'other-inquiry', assigned, input: inquiry });
    expect(outcome.refusals).toEqual([{ tool: 'catering_quote', requested: JSON.stringify(request), reason }]);
    expect(outcome.state).toBe('invalid');
    expect(outcome.reason).toBe('worker threw ScopeViolation');
    expect(outcome.sourcesReached).toBe(0);
  });

  it('refuses the broadened request a scripted model makes (offline:broaden asks for 42 guests)', async () => {
    const outcome = await runWith(
      referenceRegistry,
      { id: 'Q', worker: 'catering-quote', assigned, input: inquiry, model: 'offline:broaden', budget: { modelCalls: 2, estimatedCostPerCall: 7 } },
      { calls: 2 },
    );
    expect(outcome.refusals).toEqual([
      {
        tool: 'catering_quote',
        requested: '{"sku":"SKU-VANILLA","guests":42}',
        reason: 'only the assigned inquiry {"sku":"SKU-VANILLA","guests":41} may be requested',
      },
    ]);
    // The model asked, was refused, and finished: two calls, no quote.
    expect(outcome.usage).toEqual({ modelCalls: 2, estimatedCost: 14 });
    expect(outcome.state).toBe('invalid');
    expect(outcome.reason).toBe('worker threw NoQuoteProduced');
    expect(outcome.findings).toBeUndefined();
  });
});

describe('ids tools refuse ids that were not assigned', () => {
  it('refuses a scout reading a source of another subtask', async () => {
    const peeking = testKind({
      kind: 'peeking',
      dimension: 'ids',
      output: z.object({ n: z.int() }),
      sources: { catering_quote: quoteSource },
      run: async (ctx) => ({ n: (await ctx.tools.catering_quote({ sku: 'SKU-SORBET', guests: 10 })).length }),
    });
    const outcome = await runWith(createRegistry([peeking]), { id: 'P', worker: 'peeking', assigned: { ids: ['SKU-VANILLA'] } }, { calls: 1 });
    expect(outcome.refusals?.[0]?.reason).toBe('SKU-SORBET is not assigned (assigned: SKU-VANILLA)');
  });
});

describe('file tools refuse files and lines that were not assigned', () => {
  const attempts = [
    { request: { path: 'src/c.ts' }, reason: 'src/c.ts is not assigned' },
    { request: { path: 'src/b.ts' }, reason: 'only lines 1-120 of src/b.ts are assigned' },
    { request: { path: 'src/b.ts', lines: [100, 121] as [number, number] }, reason: 'outside the assigned lines 1-120 of src/b.ts' },
  ];
  const prying = testKind({
    kind: 'prying',
    dimension: 'paths',
    output: z.object({ refused: z.int() }),
    sources: { repo: fileSource({ description: 'files', load: async () => Array.from({ length: 300 }, (_, i) => `line ${i + 1}`) }) },
    run: async (ctx) => {
      let refused = 0;
      for (const { request } of attempts) {
        await ctx.tools.repo(request).catch((error: unknown) => {
          if (error instanceof ScopeViolation) refused += 1;
        });
      }
      return { refused };
    },
  });

  it('records each refusal with the request written as a path and line range', async () => {
    const outcome = await runWith(
      createRegistry([prying]),
      { id: 'R', worker: 'prying', assigned: { files: [{ path: 'src/b.ts', lines: [[1, 120]] }] } },
      { calls: 1 },
    );
    expect(outcome.findings).toEqual({ refused: 3 });
    expect(outcome.refusals).toEqual([
      { tool: 'repo', requested: 'src/c.ts', reason: attempts[0]?.reason },
      { tool: 'repo', requested: 'src/b.ts', reason: attempts[1]?.reason },
      { tool: 'repo', requested: 'src/b.ts#L100-L121', reason: attempts[2]?.reason },
    ]);
    // Nothing was read, so nothing was covered: every request was refused, none reached a source,
    // so the outcome is ok with an empty observation and reconcile reports the file as not inspected.
    expect(outcome.observed).toEqual({ files: [], recordCount: 0 });
    expect(outcome.state).toBe('ok');
    expect(outcome.sourcesReached).toBe(0);
  });
});

describe('file tools read a path in its one normalized form', () => {
  const loaded: string[] = [];
  const reader = (requests: readonly string[]) =>
    testKind({
      kind: 'reader',
      dimension: 'paths',
      output: z.object({ lines: z.int(), refused: z.int() }),
      sources: {
        repo: fileSource({
          description: 'files',
          load: async (path) => {
            loaded.push(path);
            return ['one', 'two'];
          },
        }),
      },
      run: async (ctx) => {
        let [lines, refused] = [0, 0];
        for (const path of requests) {
          await ctx.tools.repo({ path }).then(
            (read) => (lines += read.length),
            (error: unknown) => {
              if (!(error instanceof ScopeViolation)) throw error;
              refused += 1;
            },
          );
        }
        return { lines, refused };
      },
    });

  it('answers ./src/a.ts and src//a.ts from the assigned src/a.ts, and never loads an absolute or .. path', async () => {
    loaded.length = 0;
    const requests = ['./src/a.ts', 'src//a.ts', '../src/a.ts', '/src/a.ts', 'src/../src/a.ts'];
    const outcome = await runWith(createRegistry([reader(requests)]), { id: 'R', worker: 'reader', assigned: { files: [{ path: 'src/a.ts' }] } }, { calls: 1 });
    expect(outcome.findings).toEqual({ lines: 4, refused: 3 });
    expect(loaded).toEqual(['src/a.ts', 'src/a.ts']);
    expect(outcome.observed).toEqual({ files: [{ path: 'src/a.ts' }], recordCount: 2 });
    expect(outcome.refusals?.map((r) => [r.requested, r.reason])).toEqual([
      ['../src/a.ts', 'the path must not contain a .. segment: a path names a file inside the tree the worker reads, in one way only'],
      ['/src/a.ts', 'the path must be a relative path: an absolute path (one starting with /) is refused'],
      ['src/../src/a.ts', 'the path must not contain a .. segment: a path names a file inside the tree the worker reads, in one way only'],
    ]);
  });
});
