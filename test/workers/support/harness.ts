import { z } from 'zod';
import type { Dimension, DispatchedSubtask, OutcomeInput } from '../../../lib/contract';
import {
  createModelProvider,
  defineWorker,
  parseModelConfig,
  runSubtask,
  type BudgetPort,
  type ModelProvider,
  type SourcesOf,
  type WorkerDefinition,
  type DefinedWorker,
  type WorkerRegistry,
} from '../../../lib/workers';

/**
 * Test helpers for the worker SDK: dispatched subtasks with a live deadline, and an in-memory
 * budget port that behaves like the ledger's (durable counter, typed refusal by name).
 */

/** A dispatched subtask whose deadline is `deadlineInMs` from now (default one minute). */
export const dispatched = (
  fields: Omit<z.input<typeof DispatchedSubtask>, 'round' | 'deadline'> & { round?: number; deadlineInMs?: number },
): z.input<typeof DispatchedSubtask> => {
  const { deadlineInMs = 60_000, round = 1, ...rest } = fields;
  return {
    round,
    budget: { modelCalls: 4, estimatedCostPerCall: 7 },
    ...rest,
    deadline: new Date(Date.now() + deadlineInMs).toISOString(),
  };
};

/** The error the ledger raises, recognised by name by the SDK. */
export class FakeBudgetExhausted extends Error {
  override readonly name = 'BudgetExhausted';
  constructor(
    readonly limit: string,
    readonly counter: string,
  ) {
    super(`${limit} ${counter} allowance exhausted`);
  }
}

/** A durable counter shared by every port made from it, as the ledger's item is shared by generations. */
export interface MemoryAllowance {
  readonly limit: number;
  used: number;
  port(): BudgetPort;
}

/**
 * An in-memory allowance of `limit` calls.
 *
 * @example
 * const allowance = memoryAllowance(3);
 * await allowance.port().reserve(); // allowance.used === 1
 */
export const memoryAllowance = (limit: number): MemoryAllowance => {
  const allowance: MemoryAllowance = {
    limit,
    used: 0,
    port: () => ({
      reserve: async () => {
        if (allowance.used >= limit) throw new FakeBudgetExhausted('subtask', 'calls');
        allowance.used += 1;
      },
    }),
  };
  return allowance;
};

/** A port that always fails with an error of the given name (an infrastructure failure). */
export const failingPort = (name: string): BudgetPort => ({
  reserve: async () => {
    throw Object.assign(new Error(`${name} from the port`), { name });
  },
});

/** The provider of a deployment with MODEL_PROVIDER unset: the offline model. */
export const offlineModels = (): ModelProvider => createModelProvider({ config: parseModelConfig({}) });

export interface RunOptions {
  /** Calls in the in-memory allowance when no `budget` is given. @default 4 */
  readonly calls?: number;
  readonly budget?: BudgetPort;
  readonly models?: ModelProvider;
  readonly signal?: AbortSignal;
}

/**
 * Runs one dispatched subtask through the SDK with the offline model and an in-memory allowance.
 *
 * @example
 * const outcome = await runWith(registry, { id: 'B', worker: 'tax-statements', assigned: Q2 });
 */
export const runWith = (registry: WorkerRegistry, fields: Parameters<typeof dispatched>[0], options: RunOptions = {}): Promise<OutcomeInput> =>
  runSubtask({
    subtask: dispatched(fields),
    registry,
    budget: options.budget ?? memoryAllowance(options.calls ?? 4).port(),
    models: options.models ?? offlineModels(),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });

const NoInput = z.strictObject({});

/**
 * A test kind without input, whose merge is never the point: only its sources and `run` matter.
 *
 * @example
 * const probe = testKind({ kind: 'probe', dimension: 'ids', output: z.object({}), sources: {}, run: async () => ({}) });
 */
export const testKind = <D extends Dimension, O extends z.ZodType, S extends SourcesOf<D>>(spec: {
  readonly kind: string;
  readonly dimension: D;
  readonly output: O;
  readonly sources: S;
  readonly run: WorkerDefinition<D, typeof NoInput, O, S, Record<string, never>>['run'];
}): DefinedWorker => defineWorker({ label: `${spec.kind} source`, recordNoun: 'records', input: NoInput, merge: () => ({}), ...spec });
