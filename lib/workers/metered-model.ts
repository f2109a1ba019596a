import { z } from 'zod';
import type { Refusal, Usage } from '../contract';
import { DeadlineExceeded, EstimateMismatch } from './errors';
import type { BudgetPort, ModelAdapter, WorkerModel } from './model';
import type { Session } from './session';

/**
 * `ctx.model`: the worker's only way to a model. Each call is reserved through the budget port
 * before it is made, counted at the assignment's fixed estimate, and bounded by the subtask's
 * signal. A reservation stays counted even when the call then fails: the provider may have
 * charged for it.
 */

/** The ledger's `BudgetExhausted`, recognised by name so the SDK does not import the ledger. */
const BudgetExhaustedShape = z.object({
  name: z.literal('BudgetExhausted'),
  limit: z.string().default('unknown'),
  counter: z.string().optional(),
});

/**
 * What went wrong at the budget port while a worker ran, sorted by the error's name:
 * - `BudgetExhausted` stops the worker's tools and model calls (`ctx.signal` fires) and makes
 *   the outcome `invalid`, unless `run` still returns findings that pass the output schema from
 *   what it had already read: those stand, and coverage shows only the records actually read;
 * - `DeadlinePassed` (the ledger saw the deadline first) stops it as the deadline would: `timed_out`;
 * - anything else (`LeaseLost`, `RunCancelled`, a DynamoDB failure) is `fatal`: it stops the
 *   worker and is rethrown to the caller of `runSubtask`, who owns the claim.
 *
 * @example
 * const failures: PortFailures = {};
 * // after a BudgetExhausted: failures.exhausted.reason === 'budget exhausted: subtask calls'
 */
export interface PortFailures {
  exhausted?: { readonly error: unknown; readonly reason: string };
  fatal?: unknown;
}

/**
 * @example
 * model.usage() // { modelCalls: 3, estimatedCost: 21 } after three reserved calls at 7
 */
export interface MeteredModel extends WorkerModel {
  usage(): Usage;
}

/**
 * @example
 * meterModel({ adapter, budget, estimatedCostPerCall: 7, deadline, session, failures, refuse: evidence.refuse });
 */
export interface MeterOptions {
  readonly adapter: ModelAdapter;
  readonly budget: BudgetPort;
  readonly estimatedCostPerCall: number;
  /** The assignment's deadline, for the stop reason when the ledger reports it passed. */
  readonly deadline: string;
  readonly session: Session;
  readonly failures: PortFailures;
  refuse(refusal: Refusal): void;
  /** Awaited before each call is reserved, with the run's longest call so far (ms): the checkpointer's handover hold (`holdModelCall`). Bounded by the session's signal. */
  readonly hold?: ((expectedMs: number) => Promise<void>) | undefined;
  /** Clock in epoch milliseconds, to measure calls for `hold`. @default Date.now */
  readonly now?: (() => number) | undefined;
}

const asError = (value: unknown): Error => (value instanceof Error ? value : new Error(String(value)));

/** Sorts a budget port error into `failures` and stops the session with it. */
const notePortFailure = (options: MeterOptions, error: unknown): void => {
  const exhausted = BudgetExhaustedShape.safeParse(error);
  if (exhausted.success) {
    const { limit, counter } = exhausted.data;
    options.failures.exhausted ??= { error, reason: `budget exhausted: ${limit}${counter ? ` ${counter}` : ''}` };
    options.session.stop(asError(error));
  } else if (asError(error).name === 'DeadlinePassed') {
    options.session.halt(new DeadlineExceeded(options.deadline));
  } else {
    options.failures.fatal ??= error;
    options.session.halt(asError(error));
  }
};

/**
 * Wraps a model adapter for one subtask run.
 *
 * @example
 * const model = meterModel({ adapter, budget, estimatedCostPerCall: 7, deadline, session, failures, refuse });
 * await model.call({ messages: [userText('…')] });
 * model.usage() // { modelCalls: 1, estimatedCost: 7 }
 */
export const meterModel = (options: MeterOptions): MeteredModel => {
  let calls = 0;
  let longestMs = 0;
  const now = options.now ?? Date.now;
  const perCall = options.estimatedCostPerCall;
  return {
    usage: () => ({ modelCalls: calls, estimatedCost: calls * perCall }),
    call: async ({ estimatedCost, ...request }) => {
      options.session.throwIfStopped();
      if (estimatedCost !== undefined && estimatedCost !== perCall) {
        options.refuse({ tool: 'model', reason: `the assignment fixes ${perCall} per call`, requested: `estimatedCost ${estimatedCost}` });
        throw new EstimateMismatch(perCall, estimatedCost);
      }
      const hold = options.hold;
      if (hold !== undefined) await options.session.guard(() => hold(longestMs));
      try {
        await options.budget.reserve();
      } catch (error) {
        notePortFailure(options, error);
        throw error;
      }
      calls += 1;
      const startedAt = now();
      const answer = await options.session.guard(() => options.adapter.converse(request, { signal: options.session.signal }));
      longestMs = Math.max(longestMs, now() - startedAt);
      return answer;
    },
  };
};
