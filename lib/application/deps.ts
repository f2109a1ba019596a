/**
 * What each function's use cases are built from. A handler's `depsFromEnv(env, registry)` builds
 * one of these once per cold start; tests build them over DynamoDB Local and fauxqs.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { SourceLabel } from '../contract';
import type { WorkerCatalog } from '../domain';
import type { Ledger } from '../ledger';
import type { RunExecutions } from '../orchestration/run-execution';
import type { Redelivery } from '../queue/redelivery';
import type { SubtaskQueue } from '../queue/subtask-queue';
import type { ModelProvider, WorkerRegistry } from '../workers';
import type { RunFormOptions } from './list-subtasks';

/** The api function: starts, reads and cancels runs. */
export interface ApiDeps {
  readonly ledger: Ledger;
  readonly executions: RunExecutions;
  /** The kinds (and models) this deployment runs; a plan may use only these. */
  readonly catalog: WorkerCatalog;
  readonly maxDeadlineSeconds: number;
  /** Subtasks each kind runs at once (`maxConcurrency × batchSize`); capacity warnings need it. */
  readonly capacity?: Readonly<Record<string, number>> | undefined;
  /** The JWT claim that holds the caller's tenant. */
  readonly tenantClaim: string;
  readonly newRunId: () => string;
  readonly logger: Logger;
  /** When `GET /runs/{runId}` pages its subtasks; the contract's defaults without it (tests page small runs). */
  readonly runForms?: RunFormOptions;
}

/** The dispatch function: sends a round as it was stored (round 1: appends the api's plan first). */
export interface DispatchDeps {
  readonly ledger: Ledger;
  readonly queue: SubtaskQueue;
  /** Subtasks per batch: each round is written as batches of this many, each run by a child execution. */
  readonly batchSubtasks: number;
  readonly now: () => number;
  readonly logger: Logger;
}

/** The deadline function: arms, awaits, hedges and seals one Map iteration. */
export interface DeadlineDeps {
  readonly ledger: Ledger;
  readonly executions: RunExecutions;
  /** The kind queues, on which the Hedge step enqueues a hedged subtask's copies. */
  readonly queue: SubtaskQueue;
  readonly now: () => number;
  readonly logger: Logger;
}

/** The worker function: runs the deliveries of one SQS batch. */
export interface WorkerDeps {
  readonly now: () => number;
  readonly ledger: Ledger;
  readonly redelivery: Redelivery;
  readonly executions: RunExecutions;
  readonly registry: WorkerRegistry;
  readonly models: ModelProvider;
  readonly leaseMs: number;
  readonly maxReceiveCount: number;
  readonly logger: Logger;
  readonly metrics: Metrics;
}

/** The reconcile function: reconciles a round, then appends the next one or closes the run. */
export interface ReconcileDeps {
  readonly ledger: Ledger;
  /** The clock that fixes a follow-up round's absolute deadlines when Reconcile appends it. */
  readonly now: () => number;
  readonly registry: WorkerRegistry;
  /** The models a requested synthesis may use (the workers' adapters); the offline model alone without it. */
  readonly models?: ModelProvider | undefined;
  readonly sources: Record<string, SourceLabel>;
  readonly logger: Logger;
  readonly metrics: Metrics;
}
