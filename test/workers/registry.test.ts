import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRegistry, defineWorker, MergeConflict, UnknownWorkerKind, WorkerDefinitionError, type DefinedWorker } from '../../lib/workers';
import { referenceCatalog, referenceRegistry, transactionFeedSource } from '../../examples/app';

const Total = z.object({ total: z.int() });
const sumTotals = (items: readonly { total: number }[]) => ({ total: items.reduce((sum, item) => sum + item.total, 0) });
const describeTotal = ({ total }: { total: number }) => `Total ${total}.`;
/** One input schema, shared: a re-check takes its primary's input, so an alternate must accept it. */
const NoInput = z.strictObject({});

const totalKind = (kind: string, extra: { alternateSource?: string; merge?: typeof sumTotals; output?: z.ZodType<{ total: number }> } = {}): DefinedWorker =>
  defineWorker({
    kind,
    dimension: 'time',
    label: `${kind} label`,
    recordNoun: 'rows',
    ...(extra.alternateSource === undefined ? {} : { alternateSource: extra.alternateSource }),
    input: NoInput,
    output: extra.output ?? Total,
    sources: {},
    merge: extra.merge ?? sumTotals,
    summarize: describeTotal,
    run: async () => ({ total: 0 }),
  });

describe('the reference catalog', () => {
  it('lists every reference kind with its dimension', () => {
    expect(referenceCatalog.kinds()).toEqual([
      'tax-statements',
      'transaction-feed',
      'scout-pricing',
      'scout-packaging',
      'scout-reviews',
      'scout-crm',
      'scout-news',
      'catering-quote',
    ]);
    expect(referenceCatalog.kinds().map((kind) => referenceCatalog.get(kind)?.dimension)).toEqual(['time', 'time', 'ids', 'ids', 'ids', 'ids', 'ids', 'ids']);
    expect(referenceCatalog.get('nobody')).toBeUndefined();
  });

  it('gives the manifest its source labels', () => {
    expect(referenceRegistry.sources()['tax-statements']).toEqual({
      label: 'monthly statements',
      recordNoun: 'transactions',
      alternateSource: 'transaction-feed',
    });
    expect(referenceRegistry.sources()['scout-crm']).toEqual({ label: 'CRM notes', recordNoun: 'notes' });
  });
});

describe('createRegistry checks the kinds against each other', () => {
  it('refuses a kind registered twice', () => {
    expect(() => createRegistry([totalKind('a'), totalKind('a')])).toThrow(new WorkerDefinitionError('a', 'is registered twice'));
  });

  it('refuses an alternate source that is not registered', () => {
    expect(() => createRegistry([totalKind('a', { alternateSource: 'b' })])).toThrow(new WorkerDefinitionError('a', 'alternate source "b" is not registered'));
  });

  it('refuses an alternate source whose findings could not merge with the primary', () => {
    const other = z.object({ total: z.int() });
    expect(() => createRegistry([totalKind('a', { alternateSource: 'b' }), totalKind('b', { output: other })])).toThrow(/must use the same output schema/);
  });

  it("refuses an alternate source that cannot take its primary's input, naming both kinds", () => {
    const helpdesk = defineWorker({
      kind: 'helpdesk',
      dimension: 'ids',
      label: 'helpdesk',
      recordNoun: 'tickets',
      alternateSource: 'ticket-export',
      input: z.strictObject({ pageSize: z.int() }),
      output: Total,
      sources: {},
      merge: sumTotals,
      run: async () => ({ total: 0 }),
    });
    const ticketExport = defineWorker({
      kind: 'ticket-export',
      dimension: 'ids',
      label: 'ticket export',
      recordNoun: 'tickets',
      input: z.strictObject({ format: z.literal('csv') }),
      output: Total,
      sources: {},
      merge: sumTotals,
      run: async () => ({ total: 0 }),
    });
    expect(() => createRegistry([helpdesk, ticketExport])).toThrow(
      new WorkerDefinitionError(
        'helpdesk',
        'alternate source "ticket-export" has another input schema than "helpdesk", so it cannot take the input of a re-check of "helpdesk"\'s gaps: ' +
          'give both kinds the same input schema, or declare recheckInput on "helpdesk" to map its input to "ticket-export"\'s',
      ),
    );
  });

  it('accepts an alternate source with another input when the primary maps its input (recheckInput)', () => {
    const PageInput = z.strictObject({ pageSize: z.int().default(20) });
    const helpdesk = defineWorker({
      kind: 'helpdesk',
      dimension: 'ids',
      label: 'helpdesk',
      recordNoun: 'tickets',
      alternateSource: 'ticket-export',
      recheckInput: (input) => ({ format: 'csv', rows: input.pageSize * 5 }),
      input: PageInput,
      output: Total,
      sources: {},
      merge: sumTotals,
      run: async () => ({ total: 0 }),
    });
    const ticketExport = defineWorker({
      kind: 'ticket-export',
      dimension: 'ids',
      label: 'ticket export',
      recordNoun: 'tickets',
      input: z.strictObject({ format: z.literal('csv'), rows: z.int() }),
      output: Total,
      sources: {},
      merge: sumTotals,
      run: async () => ({ total: 0 }),
    });
    const catalog = createRegistry([helpdesk, ticketExport]).catalog();
    // The primary's input is parsed with its own schema first (the default pageSize 20), then mapped.
    expect(catalog.get('helpdesk')?.recheckInput?.(undefined)).toEqual({ format: 'csv', rows: 100 });
    expect(catalog.get('helpdesk')?.recheckInput?.({ pageSize: 2 })).toEqual({ format: 'csv', rows: 10 });
    expect(catalog.get('ticket-export')).not.toHaveProperty('recheckInput');
  });

  it('refuses kinds that share findings but not the merge', () => {
    expect(() => createRegistry([totalKind('a'), totalKind('b', { merge: (items) => sumTotals(items) })])).toThrow(
      /must share its merge, summarize, items, claims and synthesizer/,
    );
  });

  it('throws UnknownWorkerKind for get and answers undefined for find', () => {
    const registry = createRegistry([totalKind('a')]);
    expect(() => registry.get('b')).toThrow(new UnknownWorkerKind('b', ['a']));
    expect(registry.find('b')).toBeUndefined();
  });
});

describe('defineWorker checks a kind on its own', () => {
  it.each([
    ['a kind name with capitals', { kind: 'Tax' }, 'Tax', 'the kind must be lower-case letters, digits and "-", starting with a letter'],
    ['an empty label', { label: '' }, 'k', 'label and recordNoun must be non-empty and alternateSource a valid kind name'],
    ['itself as alternate', { alternateSource: 'k' }, 'k', 'a kind cannot be its own alternate source'],
    [
      'recheckInput without an alternate',
      { recheckInput: () => ({}) },
      'k',
      "recheckInput maps a re-check's input to the alternate source's: declare alternateSource too",
    ],
  ])('refuses %s', (_, change, kind, problem) => {
    expect(() =>
      defineWorker({
        kind: 'k',
        dimension: 'time',
        label: 'rows',
        recordNoun: 'rows',
        input: z.strictObject({}),
        output: Total,
        sources: {},
        merge: sumTotals,
        run: async () => ({ total: 0 }),
        ...change,
      }),
    ).toThrow(new WorkerDefinitionError(kind, problem));
  });

  it('refuses a source of another dimension', () => {
    expect(() =>
      defineWorker({
        kind: 'k',
        dimension: 'ids',
        label: 'rows',
        recordNoun: 'rows',
        input: z.strictObject({}),
        output: Total,
        // @ts-expect-error a time source cannot serve an ids kind; the types say so, and so does the runtime check
        sources: { feed: transactionFeedSource },
        merge: sumTotals,
        run: async () => ({ total: 0 }),
      }),
    ).toThrow(new WorkerDefinitionError('k', 'source "feed" works in the time dimension but the kind works in ids'));
  });
});

describe('merge', () => {
  it("folds an alternate source's re-check into the primary's total", () => {
    const registry = createRegistry([totalKind('primary', { alternateSource: 'alternate' }), totalKind('alternate')]);
    const merged = registry.merge([
      { worker: 'primary', findings: { total: 30 } },
      { worker: 'alternate', findings: { total: 12 } },
      { worker: 'primary', findings: { total: 8 } },
    ]);
    expect(merged).toEqual({ result: { total: 50 }, text: 'Total 50.' });
  });

  it('refuses two groups of findings writing the same result key', () => {
    const registry = createRegistry([totalKind('a'), totalKind('b', { output: z.object({ total: z.int() }) })]);
    expect(() =>
      registry.merge([
        { worker: 'a', findings: { total: 1 } },
        { worker: 'b', findings: { total: 2 } },
      ]),
    ).toThrow(new MergeConflict('total', ['a', 'b']));
  });

  it('returns an empty result when nothing was ok', () => {
    expect(referenceRegistry.merge([])).toEqual({ result: {}, text: '' });
  });

  it('validates stored findings against the kind schema before merging', () => {
    expect(() => referenceRegistry.merge([{ worker: 'tax-statements', findings: { totalDeductiblePence: 'lots' } }])).toThrow(z.ZodError);
  });
});

describe('typicalSeconds: a kind may declare how long one subtask typically runs', () => {
  const timed = (typicalSeconds: number) =>
    defineWorker({
      kind: 'timed',
      dimension: 'time',
      label: 'timed',
      recordNoun: 'rows',
      typicalSeconds,
      input: z.strictObject({}),
      output: Total,
      sources: {},
      merge: sumTotals,
      run: async () => ({ total: 0 }),
    });

  it("reaches the planner's catalog, and is absent when not declared", () => {
    expect(
      createRegistry([timed(2.5)])
        .catalog()
        .get('timed')?.typicalSeconds,
    ).toBe(2.5);
    expect(
      createRegistry([totalKind('plain')])
        .catalog()
        .get('plain'),
    ).not.toHaveProperty('typicalSeconds');
  });

  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY])('refuses %s seconds', (seconds) => {
    expect(() => timed(seconds)).toThrow(new WorkerDefinitionError('timed', `typicalSeconds must be a positive number of seconds (got ${seconds})`));
  });
});
