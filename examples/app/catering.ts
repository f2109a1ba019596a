import { z } from 'zod';
import { converseWithTools, defineWorker, keyedSource, WorkerError } from '../../lib/workers';
import catalogueFile from './fixtures/catalogue.json' with { type: 'json' };
import { KIND_NAMES } from './kind-names';

/**
 * A bounded delegation: a draft catering quote for one inquiry. Ten portions per tub,
 * priced from the catalogue's selling price (never the supplier cost). The model may only ask
 * the scoped `catering_quote` tool for exactly the assigned inquiry; the direct function `quote`
 * is the baseline the outcome is compared with.
 */

const Catalogue = z.object({
  currency: z.literal('GBP'),
  products: z.array(z.object({ sku: z.string().min(1), name: z.string(), sellingPricePence: z.int().positive(), supplierCostPence: z.int().positive() })),
});

/**
 * The catalogue has no product with that SKU.
 *
 * @example
 * quote({ sku: 'SKU-PISTACHIO', guests: 10 }); // UnknownProduct
 */
export class UnknownProduct extends WorkerError {
  override readonly name = 'UnknownProduct';
  constructor(
    readonly sku: string,
    options?: ErrorOptions,
  ) {
    super(`the catalogue has no product ${sku}`, options);
  }
}

/**
 * The catering conversation ended without a quote from the scoped tool.
 *
 * @example
 * if (!obtained) throw new NoQuoteProduced(conversation.turns);
 */
export class NoQuoteProduced extends WorkerError {
  override readonly name = 'NoQuoteProduced';
  constructor(
    readonly turns: number,
    options?: ErrorOptions,
  ) {
    super(`the model finished after ${turns} turn(s) without a quote from catering_quote`, options);
  }
}

/** The committed catalogue, parsed once at import. */
const catalogue = new Map(Catalogue.parse(catalogueFile).products.map((product) => [product.sku, product]));

/**
 * A business rule of the fixture, not a property of a product.
 *
 * @example
 * Math.ceil(41 / PORTIONS_PER_TUB) // 5 tubs
 */
export const PORTIONS_PER_TUB = 10;

/**
 * The inquiry. Guests must be a whole number from 1 to 200: booleans, 0, 201 and 2.5 are
 * refused before any model runs, and so is a SKU the catalogue does not sell.
 *
 * @example
 * CateringInquiry.safeParse({ sku: 'SKU-VANILLA', guests: 201 }).success // false
 */
export const CateringInquiry = z.strictObject({
  sku: z
    .string()
    .min(1)
    .max(100)
    .refine((sku) => catalogue.has(sku), { message: 'is not a product in the catalogue' }),
  guests: z.int().min(1).max(200),
});
export type CateringInquiry = z.infer<typeof CateringInquiry>;

/**
 * @example
 * CateringQuote.parse(quote({ sku: 'SKU-VANILLA', guests: 11 })).totalPence // 1000
 */
export const CateringQuote = z.object({
  sku: z.string(),
  guests: z.int().min(1),
  portionsPerTub: z.literal(PORTIONS_PER_TUB),
  tubs: z.int().min(1),
  totalPence: z.int().min(0),
  currency: z.literal('GBP'),
  /** A draft: a quote is neither a sale nor a stock reservation. */
  status: z.literal('DRAFT_QUOTE'),
  stockReserved: z.literal(false),
});
export type CateringQuote = z.infer<typeof CateringQuote>;

/**
 * The direct function: ceiling division, then the selling price per tub.
 *
 * @example
 * quote({ sku: 'SKU-VANILLA', guests: 41 }) // { tubs: 5, totalPence: 2500, … }: four tubs feed only forty
 */
export const quote = (inquiry: CateringInquiry): CateringQuote => {
  const product = catalogue.get(inquiry.sku);
  if (!product) throw new UnknownProduct(inquiry.sku);
  const tubs = Math.ceil(inquiry.guests / PORTIONS_PER_TUB);
  return {
    sku: inquiry.sku,
    guests: inquiry.guests,
    portionsPerTub: PORTIONS_PER_TUB,
    tubs,
    totalPence: tubs * product.sellingPricePence,
    currency: 'GBP',
    status: 'DRAFT_QUOTE',
    stockReserved: false,
  };
};

/**
 * The scoped tool: only the assigned inquiry, priced from the catalogue (source `catalogue`).
 *
 * @example
 * await ctx.tools.catering_quote({ sku: 'SKU-VANILLA', guests: 42 }); // ScopeViolation when 41 were assigned
 */
export const quoteSource = keyedSource({
  description: "Calculate the read-only draft quote for this assignment's catering inquiry.",
  args: CateringInquiry,
  idOf: (inquiry) => inquiry.sku,
  requireInput: true,
  load: async (inquiry) => ({ source: 'catalogue', rows: [quote(inquiry)] }),
});

const QUOTE_SYSTEM =
  'Prepare a catering draft quote using the catering_quote tool with the inquiry you are given. You cannot reserve stock, buy supplies or delegate work.';

const pounds = new Intl.NumberFormat('en-GB', { style: 'currency', currency: 'GBP' });

/**
 * The quote the model obtained through the tool; the model's prose is not graded.
 *
 * @example
 * await runSubtask({ subtask: { …, worker: 'catering-quote', assigned: { ids: ['SKU-VANILLA'] }, input: { sku: 'SKU-VANILLA', guests: 41 } }, … });
 * // findings: 5 tubs, 2500 pence; baseline { matched: true, workerModelCalls: 2, baselineModelCalls: 0 }
 */
export const cateringQuote = defineWorker({
  kind: KIND_NAMES.cateringQuote,
  dimension: 'ids',
  label: 'catalogue',
  recordNoun: 'quotes',
  input: CateringInquiry,
  output: CateringQuote,
  sources: { catering_quote: quoteSource },
  baseline: quote,
  merge: (quotes) => ({ quotes: [...quotes] }),
  summarize: ({ quotes }) =>
    quotes
      .map(
        (q) =>
          `Catering draft: ${q.tubs} tub${q.tubs === 1 ? '' : 's'} of ${q.sku} for ${q.guests} guests, ${pounds.format(q.totalPence / 100)}; no stock reserved.`,
      )
      .join(' '),
  run: async (ctx) => {
    const conversation = await converseWithTools({
      model: ctx.model,
      system: QUOTE_SYSTEM,
      prompt: JSON.stringify(ctx.assignment.input),
      tools: { catering_quote: ctx.tools.catering_quote },
      maxTurns: ctx.assignment.allowance.modelCalls,
    });
    const obtained = conversation.results.at(-1)?.rows[0];
    if (obtained === undefined) throw new NoQuoteProduced(conversation.turns);
    return CateringQuote.parse(obtained);
  },
});
