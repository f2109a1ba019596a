/**
 * The example app's worker-kind names, each written once. The kinds' definitions, the follow-up
 * routing (`alternateSource`) and the CDK props' per-kind settings all import them, so a renamed
 * kind fails to compile instead of leaving a queue or a follow-up pointing at nothing.
 *
 * @example
 * exampleFanOut(…).kinds // { [KIND_NAMES.scoutCrm]: { maxConcurrency: 2 } }
 */
export const KIND_NAMES = {
  taxStatements: 'tax-statements',
  transactionFeed: 'transaction-feed',
  scoutPricing: 'scout-pricing',
  scoutPackaging: 'scout-packaging',
  scoutReviews: 'scout-reviews',
  scoutCrm: 'scout-crm',
  scoutNews: 'scout-news',
  cateringQuote: 'catering-quote',
  /** The fault-injection kind, only in `fault-workers.ts`. */
  chaos: 'chaos',
} as const;
