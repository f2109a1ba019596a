import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { defineWorker, keyedSource, TransientFailure } from '../../lib/workers';

/**
 * What a `chaos` subtask does. Every fault is one that production workers really have, made
 * deterministic so the fault-injection suite can assert exactly what the pipeline records.
 */
export const ChaosInput = z.strictObject({
  /**
   * - `none`: read the assigned ids and finish at once (the no-op worker of the benchmarks);
   * - `ignore-deadline`: read the ids, then keep working `delayMs` without watching the signal,
   *   like a client library that cannot be cancelled; its result arrives late;
   * - `transient`: fail every delivery with a `TransientFailure` (a source that keeps answering
   *   503), so SQS redelivers it until it is dead-lettered;
   * - `malformed`: return findings that fail the output schema.
   */
  fault: z.enum(['none', 'ignore-deadline', 'transient', 'malformed']).default('none'),
  /** Milliseconds of work after reading, for `ignore-deadline`. */
  delayMs: z.int().min(0).max(60_000).default(0),
});
export type ChaosInput = z.infer<typeof ChaosInput>;

const ChaosFindings = z.object({ touched: z.array(z.string()) });

/** Each assigned id is one record of the `chaos` source. */
const chaosSource = keyedSource({
  description: 'Read one assigned id of the fault-injection source',
  args: z.strictObject({ id: z.string().min(1) }),
  idOf: (args) => args.id,
  load: async ({ id }) => ({ source: 'chaos', rows: [{ id }] }),
});

/**
 * The fault-injection worker kind. Only the example app's `fault-workers.ts` registers it (the
 * worker module of a stack that runs the fault suite, and of the suite's local cloud), so a
 * deployment of `workers.ts` has no `chaos` queue and cannot be asked to misbehave.
 *
 * @example
 * { "worker": "chaos", "scope": { "ids": ["x1"] }, "input": { "fault": "ignore-deadline", "delayMs": 3000 } }
 */
export const chaosKind = defineWorker({
  kind: 'chaos',
  dimension: 'ids',
  label: 'fault injection',
  recordNoun: 'records',
  input: ChaosInput,
  output: ChaosFindings,
  sources: { read: chaosSource },
  merge: (all) => ({ touched: all.flatMap((f) => f.touched) }),
  run: async (ctx) => {
    const { fault, delayMs } = ctx.assignment.input;
    if (fault === 'transient') throw new TransientFailure('chaos', 'the source answered 503 (injected)');
    const touched: string[] = [];
    for (const id of ctx.assignment.scope.ids) touched.push(...(await ctx.tools.read({ id })).map((row) => row.id));
    // Deliberately not passing ctx.signal: this is the worker that cannot be interrupted.
    if (fault === 'ignore-deadline') await sleep(delayMs);
    return fault === 'malformed' ? ({ touched: 'not a list' } as unknown as { touched: string[] }) : { touched };
  },
});
