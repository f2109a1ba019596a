import { z } from 'zod';
import { RunResource, RunStatus } from './run-resource';

/**
 * `GET /runs`: the caller's tenant's runs, newest first, a page at a time, and the headers of
 * `GET /runs/{runId}` that let a client learn of a change without downloading an unchanged run.
 */

/** Runs per page when `limit` is not given, and the most a page may hold. */
export const RUN_LIST_LIMITS = { default: 20, min: 1, max: 100 } as const;

/** The longest `Prefer: wait=N` a `GET /runs/{runId}` honours, in seconds (API Gateway's integration limit is 30 s). */
export const MAX_WAIT_SECONDS = 20;

/** A cursor is opaque to callers; this bounds its length so a huge string is refused before it is decoded. */
export const MAX_CURSOR_LENGTH = 512;

/**
 * The query of `GET /runs`. Every parameter is optional; each is a single string value.
 * A value that breaks its rule is answered 400 naming the parameter.
 */
export const RunListQuery = z.object({
  status: RunStatus.optional(),
  limit: z
    .string()
    .regex(/^[0-9]{1,3}$/, `must be a whole number from ${RUN_LIST_LIMITS.min} to ${RUN_LIST_LIMITS.max}`)
    .transform(Number)
    .pipe(z.int().min(RUN_LIST_LIMITS.min).max(RUN_LIST_LIMITS.max))
    .optional(),
  cursor: z.string().min(1, 'must not be empty').max(MAX_CURSOR_LENGTH, `must be at most ${MAX_CURSOR_LENGTH} characters`).optional(),
});
export type RunListQuery = z.infer<typeof RunListQuery>;

/** One run as `GET /runs` lists it: the run resource's header fields, and whether its coverage is complete. */
export const RunSummary = RunResource.pick({ runId: true, status: true, goal: true, createdAt: true, updatedAt: true, progress: true })
  .extend({
    /** `answer.coverage.complete` once the run has ended with an answer; `null` before. */
    complete: z.boolean().nullable().describe('answer.coverage.complete once the run has ended with an answer; null before.'),
  })
  .describe('One run as GET /runs lists it.');
export type RunSummary = z.infer<typeof RunSummary>;

/** `200` body of `GET /runs`. `nextCursor` is present when there may be more runs. */
export const RunList = z
  .object({
    runs: z.array(RunSummary).describe('Runs, newest first.'),
    nextCursor: z.string().optional().describe('Present when there may be more runs: pass it as cursor.'),
  })
  .describe('200 body of GET /runs.');
export type RunList = z.infer<typeof RunList>;

/**
 * `Prefer: wait=N` on `GET /runs/{runId}`: hold the request up to N seconds (1 to
 * {@link MAX_WAIT_SECONDS}) until the run differs from `If-None-Match`. Other preferences in the
 * header are ignored, as RFC 7240 asks.
 *
 * @example
 * parsePreferWait('respond-async, wait=5') // 5
 * parsePreferWait('wait=0') // { problem: 'wait must be a whole number of seconds from 1 to 20' }
 */
export const parsePreferWait = (header: string | undefined): number | undefined | { problem: string } => {
  if (header === undefined) return undefined;
  const wait = header
    .split(',')
    .map((entry) => entry.trim())
    .find((entry) => /^wait\s*=/i.test(entry));
  if (wait === undefined) return undefined;
  const value = wait.replace(/^wait\s*=\s*/i, '').replace(/^"(.*)"$/, '$1');
  const seconds = /^[0-9]{1,2}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_WAIT_SECONDS) {
    return { problem: `wait must be a whole number of seconds from 1 to ${MAX_WAIT_SECONDS}` };
  }
  return seconds;
};
