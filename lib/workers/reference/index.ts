import type { WorkerCatalog } from '../../domain/catalog';
import type { DefinedWorker } from '../define';
import { createRegistry, type WorkerRegistry } from '../registry';
import { cateringQuote } from './catering';
import { chaosKind } from './chaos';
import { FAULT_INJECTION_ENV } from './fault-injection';
import { createScoutKinds, type ScoutOptions } from './scout';
import { taxStatements, transactionFeed } from './tax';

/**
 * The reference worker kinds behind `examples/`: seed 000's tax statements and transaction
 * feed, seed 001's five Scout researchers, and seed 003's catering quote.
 *
 * @example
 * createReferenceKinds({ crmMsPerNote: 1 } satisfies ReferenceOptions);
 */

export type ReferenceOptions = ScoutOptions;

/**
 * The reference kinds, with options for the simulated latencies (tests use short ones).
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

/**
 * The registry the worker Lambda and the local cloud run.
 *
 * @example
 * const outcome = await runSubtask({ subtask, registry: referenceRegistry, budget, models });
 */
export const referenceRegistry: WorkerRegistry = createRegistry(createReferenceKinds());

/**
 * What the planner, the API and the CLI validate requests against.
 *
 * @example
 * planRun(request, referenceCatalog, { maxDeadlineSeconds: 900 });
 */
export const referenceCatalog: WorkerCatalog = referenceRegistry.catalog();

/** The reference kinds plus the fault-injection kind `chaos`, for stacks that run the fault suite. */
export const faultInjectionRegistry: WorkerRegistry = createRegistry([...createReferenceKinds(), chaosKind]);

/**
 * The registry a function runs with: the reference kinds, plus `chaos` when the deployment set
 * `TESSERA_FAULT_INJECTION=true` (the construct's `faultInjection` prop; the local cloud does).
 *
 * @example
 * const registry = registryFromEnv(process.env);
 */
export const registryFromEnv = (env: Readonly<Record<string, string | undefined>>): WorkerRegistry =>
  env[FAULT_INJECTION_ENV] === 'true' ? faultInjectionRegistry : referenceRegistry;

export { chaosKind, ChaosInput } from './chaos';
export { FAULT_INJECTION_ENV } from './fault-injection';
export { cateringQuote, CateringInquiry, CateringQuote, PORTIONS_PER_TUB, quote, quoteSource } from './catering';
export { createScoutKinds, ScoutFindings, searchAccount, type ScoutOptions } from './scout';
export {
  classifyDeductibleOffline,
  DEDUCTIBLE_CATEGORIES,
  DeductibleFindings,
  statementsSource,
  taxStatements,
  transactionFeed,
  transactionFeedSource,
  type StatementTransaction,
} from './tax';
