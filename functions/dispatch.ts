import { z } from 'zod';
import type { DispatchedSubtask } from '../lib/contract';
import { planNextRound, planRun, type WorkerCatalog } from '../lib/domain';
import { RunCancelled, type Ledger } from '../lib/ledger';
import type { SubtaskQueue } from '../lib/queue/subtask-queue';
import { ledgerFor, queueFor } from '../lib/runtime/aws';
import { intVariable, jsonVariable, parseConfig, parseInput } from '../lib/runtime/config';
import { PlanRejected } from '../lib/runtime/errors';
import { createLogger, onColdStart } from '../lib/runtime/lambda';
import type { WorkerRegistry } from '../lib/workers';
import type { SourceLabel } from '../lib/contract';

const Config = z.object({
  TABLE_NAME: z.string().min(1),
  QUEUE_URLS: jsonVariable(z.record(z.string(), z.string().min(1))),
  MAX_DEADLINE_SECONDS: intVariable(900),
});

/** Task input: the execution input for round 1, the reconcile output for later rounds. */
const DispatchInput = z.object({ runId: z.string().min(1), tenantId: z.string().min(1), round: z.int().min(1) });

export interface DispatchDeps {
  readonly ledger: Ledger;
  readonly queue: SubtaskQueue;
  readonly catalog: WorkerCatalog;
  readonly sources: Record<string, SourceLabel>;
  readonly maxDeadlineSeconds: number;
  readonly now: () => number;
  readonly logger: ReturnType<typeof createLogger>;
}

/** What the function needs, from its environment and the deployment's worker registry. */
export const depsFromEnv = (env: Readonly<Record<string, string | undefined>>, registry: WorkerRegistry): DispatchDeps => {
  const config = parseConfig(Config, env);
  return {
    ledger: ledgerFor(config.TABLE_NAME),
    queue: queueFor(config.QUEUE_URLS),
    catalog: registry.catalog(),
    sources: registry.sources(),
    maxDeadlineSeconds: config.MAX_DEADLINE_SECONDS,
    now: Date.now,
    logger: createLogger('dispatch', env),
  };
};

type DispatchInput = z.infer<typeof DispatchInput>;
type RunRecord = NonNullable<Awaited<ReturnType<Ledger['getRun']>>>;

/** The subtasks of a round: the plan for round 1, follow-ups (retries, gap re-checks) after. */
const planRound = async (deps: DispatchDeps, input: DispatchInput, record: RunRecord): Promise<DispatchedSubtask[]> => {
  if (input.round === 1) {
    const plan = planRun(record.meta.request, deps.catalog, { maxDeadlineSeconds: deps.maxDeadlineSeconds });
    if (!plan.ok) throw new PlanRejected(input.runId, plan.problems.map((p) => `${p.path}: ${p.message}`));
    return plan.subtasks;
  }
  // A retried Task whose earlier attempt committed this round: the round is what is stored.
  const committed = record.subtasks.filter((item) => item.assignment.round === input.round).map((item) => item.assignment);
  if (committed.length > 0) return committed;
  const { manifest, outcomes } = await deps.ledger.readManifest(input.tenantId, input.runId);
  return planNextRound({ ...manifest, sources: deps.sources }, outcomes);
};

/**
 * When this round was first dispatched. A retried Dispatch must fix the same absolute deadlines,
 * so it recovers the instant from any subtask an earlier attempt already wrote.
 */
const dispatchedAt = (deps: DispatchDeps, input: DispatchInput, record: RunRecord): string => {
  const earlier = [...record.subtasks, ...record.uncommitted].find((item) => item.assignment.round === input.round);
  const seconds = earlier?.assignment.deadlineSeconds;
  return new Date(earlier && seconds !== undefined ? earlier.deadlineMs - seconds * 1000 : deps.now()).toISOString();
};

/**
 * Dispatch: plan the round → write it to the manifest → enqueue its subtasks. Returns the items
 * the Map awaits, each with its absolute deadline. A cancelled run gets no new round.
 */
export const createHandler = (deps: DispatchDeps) => async (event: unknown) => {
  const input = parseInput('Dispatch', DispatchInput, event);
  // Keys of an earlier invocation on this warm instance must not leak into this one's lines.
  deps.logger.resetKeys();
  deps.logger.appendKeys({ runId: input.runId, tenantId: input.tenantId, round: input.round });
  const record = await deps.ledger.getRun(input.tenantId, input.runId);
  if (!record) throw new PlanRejected(input.runId, ['the run does not exist']);
  if (record.run.status !== 'running') return { ...input, items: [] };
  const subtasks = await planRound(deps, input, record);
  // A run cancelled between the read above and this write gets no new round either.
  const appended = await deps.ledger
    .appendRound({ ...input, subtasks, dispatchedAt: dispatchedAt(deps, input, record) })
    .catch((error: unknown) => {
      if (error instanceof RunCancelled) return undefined;
      throw error;
    });
  if (!appended) return { ...input, items: [] };
  await deps.queue.enqueue(
    appended.subtasks.map((s) => ({ worker: s.worker, message: { v: 1 as const, tenantId: input.tenantId, runId: input.runId, subtaskId: s.id } })),
  );
  deps.logger.info('round dispatched', { subtasks: appended.subtasks.length, written: appended.written });
  return {
    ...input,
    items: appended.subtasks.map((s) => ({ runId: input.runId, tenantId: input.tenantId, subtaskId: s.id, deadline: s.deadline })),
  };
};

/**
 * The Lambda handler over a worker registry. The construct bundles a one-line entry per function
 * that imports the deployment's worker module and exports `handlerFor(registry)` as `handler`.
 *
 * @example
 * export const handler = handlerFor(registry);
 */
export const handlerFor = (registry: WorkerRegistry) => onColdStart(() => createHandler(depsFromEnv(process.env, registry)));
