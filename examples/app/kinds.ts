import type { DefinedWorker } from '../../lib/workers';
import { cateringQuote } from './catering';
import { createScoutKinds, type ScoutOptions } from './scout';
import { taxStatements, transactionFeed } from './tax';

export type ReferenceOptions = ScoutOptions;

/**
 * The example app's worker kinds behind `examples/*.json`: the household tax statements and its
 * transaction-feed alternate, five Scout researchers and the catering quote, with options for the
 * simulated latencies (tests use short ones).
 *
 * @example
 * const registry = createRegistry(createReferenceKinds({ crmMsPerNote: 1 }));
 */
export const createReferenceKinds = (options: ReferenceOptions = {}): DefinedWorker[] => [
  taxStatements,
  transactionFeed,
  ...createScoutKinds(options),
  cateringQuote,
];
