import { describe, expect, it } from 'vitest';
import { CateringInquiry, quote, referenceCatalog, referenceRegistry, UnknownProduct } from '../../examples/app';
import { createTestAllowance, runOffline } from '../../lib/testing';

/**
 * The catering example's authored boundaries, reasoned from the rule, not from the code: ten portions a
 * tub, so a tub is needed for every started ten guests; £5.00 (500 pence) a tub of vanilla at
 * the selling price. A quote built on the 250-pence supplier cost would halve every total.
 */
const BOUNDARIES = [
  { guests: 1, tubs: 1, totalPence: 500 },
  { guests: 10, tubs: 1, totalPence: 500 },
  { guests: 11, tubs: 2, totalPence: 1000 },
  { guests: 41, tubs: 5, totalPence: 2500 },
  { guests: 200, tubs: 20, totalPence: 10000 },
] as const;

const catalog = referenceCatalog.get('catering-quote');

describe('the direct quote function', () => {
  it.each(BOUNDARIES)('$guests guests → $tubs tubs, $totalPence pence', ({ guests, tubs, totalPence }) => {
    expect(quote({ sku: 'SKU-VANILLA', guests })).toEqual({
      sku: 'SKU-VANILLA',
      guests,
      portionsPerTub: 10,
      tubs,
      totalPence,
      currency: 'GBP',
      status: 'DRAFT_QUOTE',
      stockReserved: false,
    });
  });

  it('refuses a SKU the catalogue does not sell', () => {
    expect(() => quote({ sku: 'SKU-PISTACHIO', guests: 10 })).toThrow(UnknownProduct);
  });
});

describe('the catering-quote worker through the SDK and the offline model', () => {
  it.each(BOUNDARIES)('quotes $guests guests as $tubs tubs for $totalPence pence and matches the baseline', async ({ guests, tubs, totalPence }) => {
    const { outcome } = await runOffline({
      registry: referenceRegistry,
      worker: 'catering-quote',
      assigned: { ids: ['SKU-VANILLA'] },
      input: { sku: 'SKU-VANILLA', guests },
      budget: { modelCalls: 2, estimatedCostPerCall: 7 },
    });
    expect(outcome).toMatchObject({
      state: 'ok',
      findings: { sku: 'SKU-VANILLA', guests, tubs, totalPence, stockReserved: false },
      observed: { ids: ['SKU-VANILLA'], recordCount: 1 },
      sources: ['catalogue'],
      // The model asked for the tool, then finished: two calls against the function's none.
      usage: { modelCalls: 2, estimatedCost: 14 },
      baseline: { matched: true, workerModelCalls: 2, baselineModelCalls: 0 },
    });
  });
});

describe('the inquiry schema refuses out-of-range inquiries before any model runs', () => {
  it.each([
    ['zero guests', { sku: 'SKU-VANILLA', guests: 0 }, 'guests', 'Too small: expected number to be >=1'],
    ['201 guests', { sku: 'SKU-VANILLA', guests: 201 }, 'guests', 'Too big: expected number to be <=200'],
    ['2.5 guests', { sku: 'SKU-VANILLA', guests: 2.5 }, 'guests', 'Invalid input: expected int, received number'],
    ['a boolean guest count', { sku: 'SKU-VANILLA', guests: true }, 'guests', 'Invalid input: expected number, received boolean'],
    ['an unknown SKU', { sku: 'SKU-PISTACHIO', guests: 10 }, 'sku', 'is not a product in the catalogue'],
  ])('refuses %s', (_, input, path, message) => {
    expect(catalog?.validateInput(input)).toEqual([{ path, message }]);
    expect(CateringInquiry.safeParse(input).success).toBe(false);
  });

  it('records a dispatched inquiry with 201 guests as invalid without calling the model', async () => {
    const allowance = createTestAllowance({ modelCalls: 2, estimatedCostPerCall: 7 });
    const { outcome } = await runOffline({
      registry: referenceRegistry,
      worker: 'catering-quote',
      assigned: { ids: ['SKU-VANILLA'] },
      input: { sku: 'SKU-VANILLA', guests: 201 },
      allowance,
    });
    expect(outcome).toMatchObject({
      state: 'invalid',
      reason: 'input failed its schema: guests Too big: expected number to be <=200',
      usage: { modelCalls: 0, estimatedCost: 0 },
    });
    expect(allowance.usage()).toEqual({ modelCalls: 0, estimatedCost: 0 });
  });
});

describe('merging quotes', () => {
  it('lists the quotes and writes the draft in pounds', () => {
    const merged = referenceRegistry.merge([{ worker: 'catering-quote', findings: quote({ sku: 'SKU-VANILLA', guests: 41 }) }]);
    expect(merged.text).toBe('Catering draft: 5 tubs of SKU-VANILLA for 41 guests, £25.00; no stock reserved.');
    expect(merged.result).toEqual({ quotes: [quote({ sku: 'SKU-VANILLA', guests: 41 })] });
  });
});
