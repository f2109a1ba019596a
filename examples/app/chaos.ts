import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { defineWorker, keyedSource, TransientFailure, userText } from '../../lib/workers';
import { KIND_NAMES } from './kind-names';

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
   *   503) until `recoversAt`, or forever without it, so SQS redelivers it with backoff and, if
   *   it never recovers, dead-letters it (a poison message);
   * - `malformed`: return findings that fail the output schema;
   * - `crash`: claim, read, then go silent until a second past the deadline and fail, like a
   *   process that died after claiming: no outcome is recorded, so the subtask is sealed
   *   `timed_out` at its deadline with its claim named in the reason.
   */
  fault: z.enum(['none', 'ignore-deadline', 'transient', 'malformed', 'crash']).default('none'),
  /**
   * `all`: every attempt has the fault; `first`: only the subtask as planned, while its retries
   * (lineage `retry`) run clean, so a follow-up round can succeed where the first round timed out.
   */
  faultAttempts: z.enum(['all', 'first']).default('all'),
  /** Milliseconds of work after reading, for `ignore-deadline`. */
  delayMs: z.int().min(0).max(60_000).default(0),
  /** For `transient`: the instant from which deliveries succeed (absent: never). */
  recoversAt: z.iso.datetime({ offset: true }).optional(),
  /** Model calls made before reading (each reserves budget first, so an allowance can run out). */
  modelCalls: z.int().min(0).max(10).default(0),
  /** Assigned ids the source has no record for: the worker finds nothing there, so they are not observed (a coverage gap). */
  absent: z.array(z.string().min(1)).max(1000).default([]),
  /**
   * Seconds the subtask as planned waits after its model calls, before reading; its hedge copies
   * (replicas and pieces, `lineage.kind: "hedge"`) do not wait. A slow first copy, deterministic,
   * for the hedging suite: the copy wins the race and the original's spend stays charged.
   */
  slowOriginalSeconds: z.int().min(0).max(60).default(0),
  /** `ids` lists the ids read in the findings; `count` only counts them (for universes of 100,000 ids). */
  report: z.enum(['ids', 'count']).default('ids'),
});
export type ChaosInput = z.infer<typeof ChaosInput>;

const ChaosFindings = z.object({ touched: z.array(z.string()), records: z.int().min(0).optional() });

/** The offline model task of a `chaos` model call; its script answers `ok`. */
const CHAOS_MODEL_TASK = 'chaos-call';
/** How long past its deadline a `crash` worker stays silent before it fails. */
const CRASH_SILENCE_MS = 1_000;

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
  kind: KIND_NAMES.chaos,
  dimension: 'ids',
  label: 'fault injection',
  recordNoun: 'records',
  input: ChaosInput,
  output: ChaosFindings,
  sources: { read: chaosSource },
  offlineScripts: { [CHAOS_MODEL_TASK]: () => ({ text: 'ok' }) },
  merge: (all) => ({
    touched: all.flatMap((f) => f.touched),
    ...(all.some((f) => f.records !== undefined) ? { records: all.reduce((sum, f) => sum + (f.records ?? f.touched.length), 0) } : {}),
  }),
  run: async (ctx) => {
    const { delayMs, recoversAt, modelCalls, report, slowOriginalSeconds, faultAttempts } = ctx.assignment.input;
    const fault = faultAttempts === 'first' && ctx.assignment.lineage?.kind === 'retry' ? 'none' : ctx.assignment.input.fault;
    if (fault === 'transient' && (recoversAt === undefined || Date.now() < Date.parse(recoversAt))) {
      throw new TransientFailure('chaos', 'the source answered 503 (injected)');
    }
    for (let call = 0; call < modelCalls; call += 1) {
      await ctx.model.call({ task: CHAOS_MODEL_TASK, messages: [userText(`call ${call + 1} of ${modelCalls}`)] });
    }
    // Deliberately not passing ctx.signal either: the original must still try to record after a copy won.
    if (slowOriginalSeconds > 0 && ctx.assignment.lineage?.kind !== 'hedge') await sleep(slowOriginalSeconds * 1000);
    const absent = new Set(ctx.assignment.input.absent);
    const touched: string[] = [];
    for (const id of ctx.assignment.scope.ids) if (!absent.has(id)) touched.push(...(await ctx.tools.read({ id })).map((row) => row.id));
    // Deliberately not passing ctx.signal: this is the worker that cannot be interrupted.
    if (fault === 'ignore-deadline') await sleep(delayMs);
    if (fault === 'crash') {
      await sleep(Math.max(0, ctx.assignment.deadlineMs - Date.now()) + CRASH_SILENCE_MS);
      throw new Error('the worker died after claiming (injected)');
    }
    if (fault === 'malformed') return { touched: 'not a list' } as unknown as { touched: string[] };
    return report === 'count' ? { touched: [], records: touched.length } : { touched };
  },
});
