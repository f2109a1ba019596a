import { Duration } from 'aws-cdk-lib';
import { Policy } from '../contract';
import { InfraError } from './errors';
import { WORKER_BATCH_SIZE } from '../runtime/capacity';
import { BATCH_MAP_CONCURRENCY, BATCH_SUBTASKS } from './run-state-machine';

/**
 * Settings of one worker kind, in the construct's `kinds` map keyed by kind name.
 *
 * @example
 * new TesseraFanOut(this, 'FanOut', { auth, workers: { entry: 'src/workers.ts' }, kinds: { 'crm-notes': { maxConcurrency: 2 } } });
 */
export interface WorkerKindSettings {
  /**
   * Most concurrent worker invocations for this kind (the event source mapping's
   * `MaximumConcurrency`; Lambda accepts 2–1000).
   * @default 5
   */
  readonly maxConcurrency?: number;
}

/** One worker kind the deployment runs: its own queue and its own concurrency cap. */
export interface WorkerKindConfig extends WorkerKindSettings {
  /** Kind name as requests use it: `tax-statements`. */
  readonly kind: string;
}

/** Concurrency cap of a kind that does not set one (named in the CDK-free lib/runtime/capacity.ts). */
export { DEFAULT_KIND_CONCURRENCY } from '../runtime/capacity';

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
  batchConcurrency: BATCH_MAP_CONCURRENCY,
  batchSubtasks: BATCH_SUBTASKS,
  throttle: { rateLimit: 20, burstLimit: 40 },
  tenantDailyAllowance: { modelCalls: 2000, costLimit: 200_000 },
  degradedRunRateThreshold: 0.05,
  workerBatchSize: WORKER_BATCH_SIZE,
  // Lambda's own default: a batch is invoked as soon as a receive returns messages.
  workerBatchingWindow: Duration.seconds(0),
} as const;
