import { z } from 'zod';
import { SubtaskId } from '../lib/contract';
import { isTerminal, SubtaskNotFound, type Ledger } from '../lib/ledger';
import type { RunExecutions } from '../lib/orchestration/run-execution';
import { executionsFor, ledgerFor } from '../lib/runtime/aws';
import { parseConfig, parseInput } from '../lib/runtime/config';
import { AwaitTooLate } from '../lib/runtime/errors';
import { createLogger, onColdStart } from '../lib/runtime/lambda';

const Config = z.object({ TABLE_NAME: z.string().min(1) });

const key = { runId: z.string().min(1), tenantId: z.string().min(1), subtaskId: SubtaskId };
/** The three steps of one Map iteration (see lib/infra/run-state-machine.ts). */
const DeadlineTask = z.discriminatedUnion('action', [
  z.object({ action: z.literal('arm'), ...key, deadline: z.iso.datetime({ offset: true }) }),
  z.object({ action: z.literal('await'), ...key, deadline: z.iso.datetime({ offset: true }), taskToken: z.string().min(1), timeoutSeconds: z.int().optional() }),
  z.object({ action: z.literal('seal'), ...key }),
]);
type DeadlineTask = z.infer<typeof DeadlineTask>;

export interface DeadlineDeps {
  readonly ledger: Ledger;
  readonly executions: RunExecutions;
  readonly now: () => number;
  readonly logger: ReturnType<typeof createLogger>;
}

export const depsFromEnv = (env: Readonly<Record<string, string | undefined>>): DeadlineDeps => {
  const config = parseConfig(Config, env);
  return { ledger: ledgerFor(config.TABLE_NAME), executions: executionsFor(), now: Date.now, logger: createLogger('deadline', env) };
};

/**
 * Arm: answers from the same absolute instant whenever the iteration starts, so Map concurrency
 * never stretches a deadline. Seconds are rounded up (TimeoutSecondsPath takes whole seconds);
 * the ledger refuses outcomes from the deadline's exact millisecond on, whatever the timer says.
 */
const arm = async (deps: DeadlineDeps, task: Extract<DeadlineTask, { action: 'arm' }>) => {
  const item = await deps.ledger.getSubtask(task);
  if (!item) throw new SubtaskNotFound({ tenantId: task.tenantId, runId: task.runId, subtaskId: task.subtaskId });
  const base = { runId: task.runId, tenantId: task.tenantId, subtaskId: task.subtaskId, deadline: task.deadline };
  if (isTerminal(item.state)) return { status: 'terminal' as const, ...base, state: item.state };
  const remainingMs = Date.parse(task.deadline) - deps.now();
  if (remainingMs <= 0) return { status: 'expired' as const, ...base };
  return { status: 'waiting' as const, ...base, timeoutSeconds: Math.max(1, Math.ceil(remainingMs / 1000)) };
};

/** Await: leave the token where the worker will find it; answer it at once if the worker already finished. */
const awaitOutcome = async (deps: DeadlineDeps, task: Extract<DeadlineTask, { action: 'await' }>) => {
  if (deps.now() >= Date.parse(task.deadline)) throw new AwaitTooLate(task.subtaskId, task.deadline);
  const registration = await deps.ledger.registerWaiter(task);
  if (!registration.registered) await deps.executions.release(task.taskToken, { subtaskId: task.subtaskId, state: registration.state });
  return { registered: registration.registered };
};

/** Seal: the deadline passed with the subtask still live; `timed_out`, with the reason the ledger can tell. */
const seal = async (deps: DeadlineDeps, task: Extract<DeadlineTask, { action: 'seal' }>) => {
  const result = await deps.ledger.sealTimedOut(task);
  if (result.sealed) deps.logger.info('subtask sealed', { reason: result.reason });
  return { subtaskId: task.subtaskId, sealed: result.sealed, state: result.state };
};

export const createHandler = (deps: DeadlineDeps) => async (event: unknown) => {
  const task = parseInput('Deadline', DeadlineTask, event);
  // Keys of an earlier invocation on this warm instance must not leak into this one's lines.
  deps.logger.resetKeys();
  deps.logger.appendKeys({ runId: task.runId, tenantId: task.tenantId, subtaskId: task.subtaskId, action: task.action });
  switch (task.action) {
    case 'arm':
      return arm(deps, task);
    case 'await':
      return awaitOutcome(deps, task);
    case 'seal':
      return seal(deps, task);
  }
};

export const handler = onColdStart(() => createHandler(depsFromEnv(process.env)));
