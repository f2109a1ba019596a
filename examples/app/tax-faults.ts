import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { defineWorker, TransientFailure } from '../../lib/workers';
import { KIND_NAMES } from './kind-names';
import { readMonthByMonth, TAX_STATEMENTS_PARTS } from './tax';

/**
 * What a `tax-statements-faulty` subtask does: the tax kind's month-by-month reading, with one
 * fault a real statements worker has, made deterministic for the checkpoint suite.
 */
export const TaxFaultInput = z.strictObject({
  /**
   * The month (`YYYY-MM`) whose statement is slow: the subtask as planned waits `slowSeconds`
   * before reading it, so its deadline (or its hedge's handover) cuts it off there; its retries and
   * hedge pieces read it at once.
   */
  slowMonth: z
    .string()
    .regex(/^\d{4}-\d{2}$/)
    .optional(),
  /** Seconds the slow month takes on the first attempt. */
  slowSeconds: z.int().min(0).max(120).default(0),
  /**
   * The month (`YYYY-MM`) before which a generation that did not resume a checkpoint fails with a
   * `TransientFailure` (the process died), after `crashAfterMs` from the start of its run, long
   * enough for the checkpoint of the months it read to be written. SQS delivers the subtask
   * again; the next generation resumes from that checkpoint and does not fail.
   */
  crashBefore: z
    .string()
    .regex(/^\d{4}-\d{2}$/)
    .optional(),
  crashAfterMs: z.int().min(0).max(60_000).default(0),
});
export type TaxFaultInput = z.infer<typeof TaxFaultInput>;

/**
 * The tax statements kind with injected faults, for the end-to-end checkpoint suite. It shares
 * the tax kind's sources, findings and merge, so its findings add up with the others' in one
 * answer. Only the example app's `fault-workers.ts` registers it.
 *
 * @example
 * { "worker": "tax-statements-faulty", "scope": { "from": "2025-04-01", "toExclusive": "2025-07-01" }, "input": { "slowMonth": "2025-06", "slowSeconds": 60 } }
 */
export const taxStatementsFaulty = defineWorker({
  ...TAX_STATEMENTS_PARTS,
  kind: KIND_NAMES.taxStatementsFaulty,
  label: 'monthly statements (fault injection)',
  input: TaxFaultInput,
  // The June gap is re-checked against the feed, which takes no input: the faults stay here.
  recheckInput: () => ({}),
  run: (ctx) => {
    const { slowMonth, slowSeconds, crashBefore, crashAfterMs } = ctx.assignment.input;
    const startedAt = Date.now();
    // Only the subtask as planned is slow: its retries and its hedge pieces read at once.
    const firstAttempt = ctx.assignment.lineage === undefined;
    return readMonthByMonth(ctx, async (month) => {
      const name = month.from.slice(0, 7);
      if (name === crashBefore && ctx.resumeFrom === undefined) {
        await sleep(Math.max(0, startedAt + crashAfterMs - Date.now()));
        throw new TransientFailure('tax-statements-faulty', `the worker died before reading ${name} (injected)`);
      }
      if (name === slowMonth && firstAttempt) await sleep(slowSeconds * 1000, undefined, { signal: ctx.signal }).catch(() => undefined);
    });
  },
});
