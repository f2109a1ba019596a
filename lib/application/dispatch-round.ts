import { z } from 'zod';
import type { DispatchedSubtask } from '../contract';
import type { RunRecord } from '../ledger';
import { PlanRejected } from '../runtime/errors';
import { startInvocation } from '../runtime/lambda';
import type { DispatchDeps } from './deps';
import { appendUnlessCancelled, dispatchedAt } from './rounds';

/** One round of one run: the execution input for round 1, the reconcile output for later rounds. */
export const RoundRef = z.object({ runId: z.string().min(1), tenantId: z.string().min(1), round: z.int().min(1) });
export type RoundRef = z.infer<typeof RoundRef>;

/** One batch of a round, as the AwaitBatches Map iterates over it: a few dozen bytes. */
export interface BatchDescriptor {
  readonly round: number;
  readonly batch: number;
}

/**
 * What the run's execution does with the round: the AwaitBatches Map's batch descriptors, each
 * run by a child execution that reads its subtasks (and their absolute deadlines) from the ledger.
 * Every round runs so, so the run's own state and history grow by batches, never by subtasks.
 */
export interface DispatchedRound extends RoundRef {
  readonly batches: BatchDescriptor[];
}

/**
 * The round to send, as it was decided: round 1 is the plan the api stored with the run (appended
 * to the manifest here, once), every later round is the one Reconcile appended when it decided
 * "dispatch". Dispatch plans nothing. `undefined` when the run was cancelled before round 1 was
 * appended.
 */
const storedRound = async (deps: DispatchDeps, input: RoundRef, record: RunRecord): Promise<readonly DispatchedSubtask[] | undefined> => {
  const committed = record.subtasks.filter((item) => item.assignment.round === input.round).map((item) => item.assignment);
  if (committed.length > 0) return committed;
  if (input.round > 1) throw new PlanRejected(input.runId, [`round ${input.round} was not stored: Reconcile appends a round before it asks for its dispatch`]);
  const { plan } = record.meta;
  if (plan === undefined || plan.length === 0) throw new PlanRejected(input.runId, ['the run was stored without its plan']);
  // A retried Task recovers the instant an earlier attempt fixed, so the deadlines are the same.
  const appended = await appendUnlessCancelled(deps.ledger, { ...input, subtasks: plan, dispatchedAt: dispatchedAt(deps.now(), input.round, record) });
  return appended?.subtasks;
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

/**
 * Dispatch a round: read it as it was stored (round 1: append the api's plan) → write it as
 * batches of `deps.batchSubtasks` → enqueue its subtasks. Returns the batches the run's Map
 * starts, one child execution each. A cancelled run gets no new round.
 *
 * @example
 * const { batches } = await dispatchRound(deps)({ runId, tenantId, round: 1 }); // [{ round: 1, batch: 0 }, …]
 */
export const dispatchRound =
  (deps: DispatchDeps) =>
  async (input: RoundRef): Promise<DispatchedRound> => {
    startInvocation(deps.logger, { runId: input.runId, tenantId: input.tenantId, round: input.round });
    const record = await deps.ledger.getRun(input.tenantId, input.runId);
    if (!record) throw new PlanRejected(input.runId, ['the run does not exist']);
    const nothing: DispatchedRound = { ...input, batches: [] };
    if (record.run.status !== 'running') return nothing;
    // A run cancelled between the read above and round 1's write gets no round either.
    const subtasks = await storedRound(deps, input, record);
    if (!subtasks) return nothing;
    // The batches are written before anything is enqueued or returned, so a child never looks for one that is not there.
    const batches = await writeBatches(deps, input, subtasks, deps.batchSubtasks);
    await deps.queue.enqueue(
      subtasks.map((s) => ({ worker: s.worker, message: { v: 1 as const, tenantId: input.tenantId, runId: input.runId, subtaskId: s.id } })),
    );
    deps.logger.info('round dispatched', { subtasks: subtasks.length, batches: batches.length });
    return { ...input, batches };
  };
