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
  /** The re-check kinds of the end-to-end suite (examples/app/helpdesk.ts), only in `fault-workers.ts`. */
  helpdesk: 'helpdesk',
  helpdeskMirrored: 'helpdesk-mirrored',
  ticketExport: 'ticket-export',
  /** The tax kind with injected faults for the checkpoint suite (examples/app/tax-faults.ts), only in `fault-workers.ts`. */
  taxStatementsFaulty: 'tax-statements-faulty',
} as const;

/** The kinds only `fault-workers.ts` registers: a production deployment of `workers.ts` has none of them. */
export const FAULT_SUITE_KINDS: readonly string[] = [
  KIND_NAMES.chaos,
  KIND_NAMES.helpdesk,
  KIND_NAMES.helpdeskMirrored,
  KIND_NAMES.ticketExport,
  KIND_NAMES.taxStatementsFaulty,
];
