import type { WorkerCatalog } from '../../lib/domain';
import type { WorkerRegistry } from '../../lib/workers';
import { registry } from './workers';

/**
 * The example app: the worker kinds behind `examples/*.json`, their worker module (`workers.ts`,
 * what `npm start` and `bin/app.ts` run) and the fault-injection kind `chaos` (`fault-workers.ts`).
 * Tests import the kinds from here.
 */

/**
 * The example app's registry (`workers.ts`), for tests that run its kinds directly.
 *
 * @example
 * const outcome = await runSubtask({ subtask, registry: referenceRegistry, budget, models });
 */
export const referenceRegistry: WorkerRegistry = registry;

/**
 * What the planner validates the example requests against.
 *
 * @example
 * planRun(request, referenceCatalog, { maxDeadlineSeconds: 900 });
 */
export const referenceCatalog: WorkerCatalog = referenceRegistry.catalog();

export { createReferenceKinds, type ReferenceOptions } from './kinds';
export { KIND_NAMES } from './kind-names';
export { chaosKind, ChaosInput } from './chaos';
export { cateringQuote, CateringInquiry, CateringQuote, NoQuoteProduced, PORTIONS_PER_TUB, quote, quoteSource, UnknownProduct } from './catering';
export { createScoutKinds, ScoutFindings, searchAccount, type ScoutOptions } from './scout';
export {
  ClassificationInvalid,
  classifyDeductibleOffline,
  DEDUCTIBLE_CATEGORIES,
  DeductibleFindings,
  statementsSource,
  taxStatements,
  transactionFeed,
  transactionFeedSource,
  type StatementTransaction,
} from './tax';
