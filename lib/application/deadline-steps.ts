import { z } from 'zod';
import { SubtaskId, type SubtaskState } from '../contract';
import { hedgeWaitSeconds } from '../domain';
import { isTerminal, SubtaskNotFound } from '../ledger';
import { AwaitTooLate } from '../runtime/errors';
import { startInvocation } from '../runtime/lambda';
import type { DeadlineDeps } from './deps';

const key = { runId: z.string().min(1), tenantId: z.string().min(1), subtaskId: SubtaskId };
const instant = z.iso.datetime({ offset: true });

/** The steps of one Map iteration (see lib/infra/run-state-machine.ts), as the deadline function is given them. */
export const DeadlineStep = z.discriminatedUnion('action', [
  z.object({ action: z.literal('arm'), ...key, deadline: instant }),
  z.object({
    action: z.literal('await'),
    ...key,
    deadline: instant,
    taskToken: z.string().min(1),
    // Repeated by the state machine so its TimeoutSecondsPath resolves in the effective input too;
    // the handler judges by `deadline`, never by these.
    timeoutSeconds: z.int().optional(),
    hedgeSeconds: z.int().optional(),
  }),
  z.object({ action: z.literal('hedge'), ...key, deadline: instant }),
  z.object({ action: z.literal('seal'), ...key }),
  // LoadBatch, the first state of a batch's child execution: the batch's subtasks from the ledger.
  z.object({ action: z.literal('batch'), runId: z.string().min(1), tenantId: z.string().min(1), round: z.int().min(1), batch: z.int().min(0) }),
]);
export type DeadlineStep = z.infer<typeof DeadlineStep>;

/** One subtask of one run. */
type DeadlineRef = Pick<Step<'arm'>, 'runId' | 'tenantId' | 'subtaskId'>;

type Step<A extends DeadlineStep['action']> = Extract<DeadlineStep, { action: A }>;

export type ArmResult =
  | (DeadlineRef & { readonly status: 'terminal'; readonly deadline: string; readonly state: SubtaskState })
  | (DeadlineRef & { readonly status: 'expired'; readonly deadline: string })
  | (DeadlineRef & {
      readonly status: 'waiting';
      readonly deadline: string;
      readonly timeoutSeconds: number;
      /** Whole seconds until the subtask's hedge is due (0: now); absent when there is no hedge to start. */
      readonly hedgeSeconds?: number;
    });

/**
 * Arm: answers from the same absolute instant whenever the iteration starts, so Map concurrency
 * never stretches a deadline. A subtask with a hedge not yet started also gets `hedgeSeconds`,
 * counted from its dispatch instant (see docs/hedging.md). Seconds are rounded up (TimeoutSecondsPath takes whole seconds);
 * the ledger refuses outcomes from the deadline's exact millisecond on, whatever the timer says.
 */
const arm = async (deps: DeadlineDeps, task: Step<'arm'>): Promise<ArmResult> => {
  const item = await deps.ledger.getSubtask(task);
  if (!item) throw new SubtaskNotFound({ tenantId: task.tenantId, runId: task.runId, subtaskId: task.subtaskId });
  const base = { runId: task.runId, tenantId: task.tenantId, subtaskId: task.subtaskId, deadline: task.deadline };
  if (isTerminal(item.state)) return { status: 'terminal', ...base, state: item.state };
  const now = deps.now();
  const remainingMs = Date.parse(task.deadline) - now;
  if (remainingMs <= 0) return { status: 'expired', ...base };
  const hedgeSeconds = hedgeWaitSeconds({
    nowMs: now,
    dispatchedAtMs: Date.parse(item.dispatchedAt),
    deadlineMs: Date.parse(task.deadline),
    hedge: item.assignment.hedge,
    started: item.hedgeStartedAt !== undefined,
  });
  return { status: 'waiting', ...base, timeoutSeconds: Math.max(1, Math.ceil(remainingMs / 1000)), ...(hedgeSeconds === undefined ? {} : { hedgeSeconds }) };
};

/** Await: leave the token where the worker will find it; answer it at once if the worker already finished. */
const awaitOutcome = async (deps: DeadlineDeps, task: Step<'await'>): Promise<{ registered: boolean }> => {
  if (deps.now() >= Date.parse(task.deadline)) throw new AwaitTooLate(task.subtaskId, task.deadline);
  const registration = await deps.ledger.registerWaiter(task);
  if (!registration.registered) await deps.executions.release(task.taskToken, { subtaskId: task.subtaskId, state: registration.state });
  return { registered: registration.registered };
};

/** What the Hedge step answers: the Map item again (so the iteration goes back to Arm), and the copies it enqueued. */
export type HedgeResult = DeadlineRef & {
  readonly deadline: string;
  /** The copies enqueued (the same ids on a retried step), empty when the race could not start. */
  readonly copies: readonly string[];
  /** True when this call wrote the copies to the ledger. */
  readonly written: boolean;
};

/**
 * Hedge: the subtask's hedge is due and it has not ended. Start the race in the ledger (once; a
 * retry gets the same copies back) and enqueue every copy on its kind's queue. Enqueuing again on
 * a retry is harmless: a copy is claimed in the ledger before any work, like any subtask.
 */
const hedge = async (deps: DeadlineDeps, task: Step<'hedge'>): Promise<HedgeResult> => {
  const ref = { runId: task.runId, tenantId: task.tenantId, subtaskId: task.subtaskId };
  const started = await deps.ledger.startHedge(ref);
  await deps.queue.enqueue(started.copies.map((copy) => ({ worker: copy.worker, message: { v: 1 as const, ...ref, subtaskId: copy.id } })));
  deps.logger.info('hedge started', { copies: started.copies.length, written: started.written, state: started.state });
  return { ...ref, deadline: task.deadline, copies: started.copies.map((copy) => copy.id), written: started.written };
};

/** Seal: the deadline passed with the subtask still live; `timed_out`, with the reason the ledger can tell. */
const seal = async (deps: DeadlineDeps, task: Step<'seal'>) => {
  const result = await deps.ledger.sealTimedOut(task);
  if (result.sealed) deps.logger.info('subtask sealed', { reason: result.reason });
  return { subtaskId: task.subtaskId, sealed: result.sealed, state: result.state };
};

/** The items of a batch's per-subtask Map: the same shape as the inline Map's items. */
export interface LoadedBatch {
  readonly items: { runId: string; tenantId: string; subtaskId: string; deadline: string }[];
}

/** LoadBatch: the subtasks (with their absolute deadlines) dispatch wrote for this batch of this round. */
const loadBatch = async (deps: DeadlineDeps, task: Step<'batch'>): Promise<LoadedBatch> => {
  const entries = await deps.ledger.readBatch(task);
  deps.logger.info('batch loaded', { round: task.round, batch: task.batch, subtasks: entries.length });
  return { items: entries.map((e) => ({ runId: task.runId, tenantId: task.tenantId, subtaskId: e.subtaskId, deadline: e.deadline })) };
};

/**
 * One step of a subtask's deadline: arm, await, hedge or seal, against the absolute deadline the
 * subtask was dispatched with.
 *
 * @example
 * await deadlineStep(deps)({ action: 'arm', runId, tenantId, subtaskId: 'A', deadline });
 */
export const deadlineStep = (deps: DeadlineDeps) => async (task: DeadlineStep) => {
  if (task.action === 'batch') {
    startInvocation(deps.logger, { runId: task.runId, tenantId: task.tenantId, action: task.action });
    return loadBatch(deps, task);
  }
  startInvocation(deps.logger, { runId: task.runId, tenantId: task.tenantId, subtaskId: task.subtaskId, action: task.action });
  switch (task.action) {
    case 'arm':
      return arm(deps, task);
    case 'await':
      return awaitOutcome(deps, task);
    case 'hedge':
      return hedge(deps, task);
    case 'seal':
      return seal(deps, task);
  }
};
