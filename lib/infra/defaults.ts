import { Duration } from 'aws-cdk-lib';
import { Policy } from '../contract';
import { InfraError } from './errors';

/** One worker kind the deployment runs: its own queue and its own concurrency cap. */
export interface WorkerKindConfig {
  /** Kind name as requests use it: `tax-statements`. */
  readonly kind: string;
  /**
   * Most concurrent worker invocations for this kind (the event source mapping's
   * `MaximumConcurrency`; Lambda accepts 2–1000).
   * @default 5
   */
  readonly maxConcurrency?: number;
}

/** Concurrency cap of a kind that does not set one. */
export const DEFAULT_KIND_CONCURRENCY = 5;

/**
 * The reference worker kinds. `scout-crm` gets 2 because seed 001's CRM search had a 22 s p95
 * and a long tail; more parallel calls into it only lengthen everyone's tail.
 *
 * @example
 * new TesseraFanOut(this, 'FanOut', { auth, workerKinds: [...REFERENCE_WORKER_KINDS, { kind: 'my-kind' }] });
 */
export const REFERENCE_WORKER_KINDS: readonly WorkerKindConfig[] = [
  { kind: 'tax-statements' },
  { kind: 'transaction-feed' },
  { kind: 'scout-pricing' },
  { kind: 'scout-packaging' },
  { kind: 'scout-reviews' },
  { kind: 'scout-crm', maxConcurrency: 2 },
  { kind: 'scout-news' },
  { kind: 'catering-quote' },
];

/** The fault-injection kind `faultInjection: true` adds (lib/workers/reference/chaos.ts). */
export const FAULT_INJECTION_KIND: WorkerKindConfig = { kind: 'chaos' };

/**
 * The variable that registers the fault-injection kind in every function. The worker registry
 * reads it (lib/workers/reference `registryFromEnv`), so both sides import this name.
 */
export { FAULT_INJECTION_ENV } from '../workers/reference/fault-injection';

/**
 * Ledger attributes that hold what a worker observed or produced. Only the worker (and the
 * deadline seal) may write them; the API role gets an explicit Deny on writes naming any of
 * these, so no API bug can forge or overwrite an outcome.
 *
 * @example
 * OUTCOME_ATTRIBUTES.includes('observed') // true: only the worker writes `observed`
 */
export const OUTCOME_ATTRIBUTES = [
  // lib/ledger keeps a subtask's outcome under `outcome`, with the generation that wrote it
  'outcome',
  'outcomeGeneration',
  // the outcome's own fields, denied too in case an item ever stores them at the top level
  'observed',
  'findings',
  'sources',
  'sourcesReached',
  'refusals',
  'baseline',
  'late',
] as const;

/** Receives before a subtask message moves to the dead-letter queue. */
export const MAX_RECEIVE_COUNT = 3;

/**
 * Rounds the contract allows at most, read from the `policy.maxRounds` schema so the two cannot
 * drift. The state machine's overall timeout covers this many deadlines back to back.
 */
export const MAX_ROUNDS: number = (() => {
  const max = Policy.shape.maxRounds.unwrap().maxValue;
  if (max === null) throw new InfraError('policy.maxRounds has no upper bound, so no execution timeout can cover every round');
  return max;
})();

/**
 * Defaults of the `TesseraFanOut` props, named once so the construct and its docs agree.
 *
 * @example
 * FAN_OUT_DEFAULTS.workerTimeout.toSeconds() // 120: also the claim lease
 */
export const FAN_OUT_DEFAULTS = {
  tenantClaim: 'custom:tenant',
  serviceName: 'tessera',
  workerTimeout: Duration.minutes(2),
  maxDeadline: Duration.minutes(15),
  mapMaxConcurrency: 40,
  throttle: { rateLimit: 20, burstLimit: 40 },
  tenantDailyAllowance: { modelCalls: 2000, costLimit: 200_000 },
  degradedRunRateThreshold: 0.05,
  workerBatchSize: 5,
  workerBatchingWindow: Duration.seconds(1),
} as const;
