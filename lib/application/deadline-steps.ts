import { z } from 'zod';
import { SubtaskId, type SubtaskState } from '../contract';
import { hedgeWaitSeconds } from '../domain';
import { isTerminal, SubtaskNotFound } from '../ledger';
import { AwaitTooLate } from '../runtime/errors';
import { startInvocation } from '../runtime/lambda';
import type { DeadlineDeps } from './deps';

const key = { runId: z.string().min(1), tenantId: z.string().min(1), subtaskId: SubtaskId };
const instant = z.iso.datetime({ offset: true });

/** The three steps of one Map iteration (see lib/infra/run-state-machine.ts), as the deadline function is given them. */
export const DeadlineStep = z.discriminatedUnion('action', [
  z.object({ action: z.literal('arm'), ...key, deadline: instant }),
  z.object({ action: z.literal('await'), ...key, deadline: instant, taskToken: z.string().min(1), timeoutSeconds: z.int().optional() }),
  z.object({ action: z.literal('seal'), ...key }),
]);
export type DeadlineStep = z.infer<typeof DeadlineStep>;

/** One subtask of one run. */
type DeadlineRef = Pick<DeadlineStep, 'runId' | 'tenantId' | 'subtaskId'>;

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

/** Seal: the deadline passed with the subtask still live; `timed_out`, with the reason the ledger can tell. */
const seal = async (deps: DeadlineDeps, task: Step<'seal'>) => {
  const result = await deps.ledger.sealTimedOut(task);
  if (result.sealed) deps.logger.info('subtask sealed', { reason: result.reason });
  return { subtaskId: task.subtaskId, sealed: result.sealed, state: result.state };
};

/**
 * One step of a subtask's deadline: arm, await or seal, against the absolute deadline the
 * subtask was dispatched with.
 *
 * @example
 * await deadlineStep(deps)({ action: 'arm', runId, tenantId, subtaskId: 'A', deadline });
 */
export const deadlineStep = (deps: DeadlineDeps) => async (task: DeadlineStep) => {
  startInvocation(deps.logger, { runId: task.runId, tenantId: task.tenantId, subtaskId: task.subtaskId, action: task.action });
  switch (task.action) {
    case 'arm':
      return arm(deps, task);
    case 'await':
      return awaitOutcome(deps, task);
    case 'seal':
      return seal(deps, task);
  }
};
