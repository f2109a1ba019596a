import { z } from 'zod';
import type { DispatchedSubtask } from '../contract';
import { planNextRound, planRun, roundModes, roundSizes, withRecheckInputs, type RoundMode } from '../domain';
import { RunCancelled, type RunRecord } from '../ledger';
import { PlanRejected } from '../runtime/errors';
import { startInvocation } from '../runtime/lambda';
import type { DispatchDeps } from './deps';

/** One round of one run: the execution input for round 1, the reconcile output for later rounds. */
export const RoundRef = z.object({ runId: z.string().min(1), tenantId: z.string().min(1), round: z.int().min(1) });
export type RoundRef = z.infer<typeof RoundRef>;

/** One batch of a batched round, as the AwaitBatches Map iterates over it: a few dozen bytes. */
export interface BatchDescriptor {
  readonly round: number;
  readonly batch: number;
}

/**
 * What the run's execution does with the round (the IsBatched? Choice reads `path`): on the inline
 * path, the AwaitSubtasks Map's items, one per subtask with its absolute deadline; on the batched
 * path, the AwaitBatches Map's batch descriptors, each run by a child execution that reads its
 * subtasks from the ledger.
 */
export interface DispatchedRound extends RoundRef {
  readonly path: RoundMode;
  readonly items: { runId: string; tenantId: string; subtaskId: string; deadline: string | undefined }[];
  readonly batches: BatchDescriptor[];
}

/** The subtasks of a round: the plan for round 1, follow-ups (retries, gap re-checks) after. */
const planRound = async (deps: DispatchDeps, input: RoundRef, record: RunRecord): Promise<DispatchedSubtask[]> => {
  if (input.round === 1) {
    const plan = planRun(record.meta.request, deps.catalog, { maxDeadlineSeconds: deps.maxDeadlineSeconds, ...(deps.paths ? { paths: deps.paths } : {}) });
    if (!plan.ok) throw new PlanRejected(input.runId, plan.problems.map((p) => `${p.path}: ${p.message}`));
    return plan.subtasks;
  }
  // A retried Task whose earlier attempt committed this round: the round is what is stored.
  const committed = record.subtasks.filter((item) => item.assignment.round === input.round).map((item) => item.assignment);
  if (committed.length > 0) return committed;
  const { manifest, outcomes } = await deps.ledger.readManifest(input.tenantId, input.runId);
  const planned = planNextRound({ ...manifest, sources: deps.sources }, outcomes, undefined, undefined, deps.paths);
  return withRecheckInputs(planned, manifest, deps.catalog);
};

/**
 * When this round was first dispatched. A retried Dispatch must fix the same absolute deadlines,
 * so it recovers the instant from any subtask an earlier attempt already wrote.
 */
export const dispatchedAt = (now: number, round: number, record: Pick<RunRecord, 'subtasks' | 'uncommitted'>): string => {
  const earlier = [...record.subtasks, ...record.uncommitted].find((item) => item.assignment.round === round);
  const seconds = earlier?.assignment.deadlineSeconds;
  return new Date(earlier && seconds !== undefined ? earlier.deadlineMs - seconds * 1000 : now).toISOString();
};

/** Writes the round's subtasks as batches of `size`, in dispatch order, and returns their descriptors. */
const writeBatches = async (deps: DispatchDeps, input: RoundRef, subtasks: readonly DispatchedSubtask[], size: number): Promise<BatchDescriptor[]> => {
  const batches: { subtaskId: string; deadline: string }[][] = [];
  subtasks.forEach((s, i) => {
    if (s.deadline === undefined) throw new PlanRejected(input.runId, [`subtask ${s.id} was stored without its absolute deadline`]);
    if (i % size === 0) batches.push([]);
    batches.at(-1)!.push({ subtaskId: s.id, deadline: s.deadline });
  });
  await deps.ledger.writeBatches({ tenantId: input.tenantId, runId: input.runId, round: input.round, batches });
  return batches.map((_, batch) => ({ round: input.round, batch }));
};

/** Appends the round, or nothing when the run was cancelled in the meantime. */
const appendUnlessCancelled = (deps: DispatchDeps, ...args: Parameters<DispatchDeps['ledger']['appendRound']>) =>
  deps.ledger.appendRound(...args).catch((error: unknown) => {
    if (error instanceof RunCancelled) return undefined;
    throw error;
  });

/**
 * Dispatch a round: plan it → write it to the manifest → enqueue its subtasks. Returns the items
 * the Map awaits, each with its absolute deadline. A cancelled run gets no new round.
 *
 * @example
 * const { items } = await dispatchRound(deps)({ runId, tenantId, round: 1 });
 */
export const dispatchRound =
  (deps: DispatchDeps) =>
  async (input: RoundRef): Promise<DispatchedRound> => {
    startInvocation(deps.logger, { runId: input.runId, tenantId: input.tenantId, round: input.round });
    const record = await deps.ledger.getRun(input.tenantId, input.runId);
    if (!record) throw new PlanRejected(input.runId, ['the run does not exist']);
    const nothing: DispatchedRound = { ...input, path: 'inline', items: [], batches: [] };
    if (record.run.status !== 'running') return nothing;
    const subtasks = await planRound(deps, input, record);
    // A run cancelled between the read above and this write gets no new round either.
    const appended = await appendUnlessCancelled(deps, { ...input, subtasks, dispatchedAt: dispatchedAt(deps.now(), input.round, record) });
    if (!appended) return nothing;
    const earlier = record.subtasks.filter((item) => item.assignment.round < input.round).map((item) => item.assignment);
    const { modes } = roundModes(roundSizes([...earlier, ...appended.subtasks]), record.meta.request.policy.maxRounds, deps.paths);
    const path = modes[input.round - 1] ?? 'inline';
    // The batches are written before anything is enqueued or returned, so a child never looks for one that is not there.
    const batches = path === 'batched' && deps.paths ? await writeBatches(deps, input, appended.subtasks, deps.paths.batchSubtasks) : [];
    await deps.queue.enqueue(
      appended.subtasks.map((s) => ({ worker: s.worker, message: { v: 1 as const, tenantId: input.tenantId, runId: input.runId, subtaskId: s.id } })),
    );
    deps.logger.info('round dispatched', { subtasks: appended.subtasks.length, written: appended.written, path, batches: batches.length });
    if (path === 'batched') return { ...input, path, items: [], batches };
    return { ...input, path, items: appended.subtasks.map((s) => ({ runId: input.runId, tenantId: input.tenantId, subtaskId: s.id, deadline: s.deadline })), batches: [] };
  };
