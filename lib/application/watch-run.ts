/**
 * `GET /runs/{runId}` with validators: a strong `ETag` (a digest of the run resource's JSON),
 * `If-None-Match` answered "not modified", and a bounded long-poll (`Prefer: wait=N`) that
 * answers as soon as the run differs from the tag the caller holds.
 *
 * While it waits it does not rebuild the run: it reads the run's change version (one GetItem of
 * the small `SUMMARY` item, 1 RCU) every {@link WATCH_POLL_MS}, and reads the whole run only
 * when the version moves, and once more when the wait ends (so a version bump lost to a crash
 * delays a notice but never turns a changed run into "not modified"). The wait ends early when
 * the function's time would not leave room for those reads (`answerBy`): a slow read of a large
 * run under load must not turn a long-poll into a timed-out request (a 502 or 504).
 */
import { createHash } from 'node:crypto';
import type { RunResource, RunSubtasksForm } from '../contract';
import type { Ledger } from '../ledger';
import { readRunForm, type RunFormOptions } from './list-subtasks';

/** How often a waiting request reads the run's change version. */
export const WATCH_POLL_MS = 250;

/** What a watch asks for. */
export interface WatchRequest {
  readonly tenantId: string;
  readonly runId: string;
  /** The `If-None-Match` header as sent. */
  readonly ifNoneMatch?: string;
  /** `Prefer: wait=N`: hold up to this many seconds while the run still matches `ifNoneMatch`. */
  readonly waitSeconds?: number;
  /** `?subtasks=page|none`: the first page of subtasks, or none (see `shapeRun`); the default form without it. */
  readonly subtasks?: RunSubtasksForm;
  /**
   * The instant (on the `now` clock, in ms) the answer must be ready by: the function's timeout
   * less room to send it. The wait ends early enough that the two reads that may follow it, at
   * the slowest pace seen so far, still finish before it. No limit without it.
   */
  readonly answerBy?: number;
}

/** The answer: no such run, the run (with its tag), or "still the run you have". */
export type WatchResult =
  | { readonly kind: 'not_found' }
  | { readonly kind: 'ok'; readonly resource: RunResource; readonly etag: string }
  | { readonly kind: 'not_modified'; readonly etag: string };

/** What watching needs besides the ledger; tests pass a fake clock, and a small paging threshold. */
export interface WatchOptions extends RunFormOptions {
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly pollMs?: number;
}

/**
 * The strong entity tag of a run resource: a digest of its JSON text.
 *
 * @example
 * etagOf(resource) // '"q0mZ3f0b2k4vJ1X8n8lR9w"'
 */
export const etagOf = (resource: RunResource): string => `"${createHash('sha256').update(JSON.stringify(resource)).digest('base64url').slice(0, 22)}"`;

/**
 * Whether an `If-None-Match` header matches a tag, by the weak comparison RFC 9110 asks of
 * `If-None-Match`: `*`, or any listed tag with the same opaque value (`W/` ignored).
 *
 * @example
 * matchesAny('W/"abc", "def"', '"def"') // true
 * matchesAny('"def-gzip"', '"def"') // true
 */
export const matchesAny = (header: string | undefined, etag: string): boolean => {
  if (header === undefined) return false;
  const opaque = (tag: string): string => tag.replace(/^W\//, '').replace(/-gzip"$/, '"');
  const wanted = opaque(etag);
  return header
    .split(',')
    .map((entry) => entry.trim())
    .some((entry) => entry === '*' || opaque(entry) === wanted);
};

/**
 * The tag of the same resource sent gzip-compressed: a strong tag names one representation, so
 * the compressed body gets its own (`If-None-Match` accepts either, see {@link matchesAny}).
 *
 * @example
 * gzipTag('"abc"') // '"abc-gzip"'
 */
export const gzipTag = (etag: string): string => etag.replace(/"$/, '-gzip"');

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Reads a run for `GET /runs/{runId}`, answering `not_modified` when it still matches
 * `ifNoneMatch`, after waiting up to `waitSeconds` for it to change.
 *
 * @example
 * const result = await watchRun(ledger, { tenantId, runId, ifNoneMatch: '"q0mZ…"', waitSeconds: 20 });
 * if (result.kind === 'ok') render(result.resource);
 */
export const watchRun = async (ledger: Ledger, request: WatchRequest, options: WatchOptions = {}): Promise<WatchResult> => {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? defaultSleep;
  const pollMs = options.pollMs ?? WATCH_POLL_MS;
  const { tenantId, runId, ifNoneMatch } = request;
  const waitUntil = now() + (request.waitSeconds ?? 0) * 1000;
  const waiting = request.waitSeconds !== undefined && ifNoneMatch !== undefined;
  // The version is read before the run, so a change after the read always moves it.
  let version = waiting ? await ledger.runVersion(tenantId, runId) : undefined;
  // A large run under load can take seconds to read: the slowest read so far paces the wait's end.
  let slowestRead = 0;
  const read = async (): Promise<WatchResult> => {
    const started = now();
    // A large run is read without its subtask items (`readRunForm`): the form shows one page at most.
    const resource = await readRunForm(ledger, { tenantId, runId }, request.subtasks, options);
    slowestRead = Math.max(slowestRead, now() - started);
    if (resource === undefined) return { kind: 'not_found' };
    // Each form is its own representation, so its tag differs from the other forms' tags.
    const etag = etagOf(resource);
    return matchesAny(ifNoneMatch, etag) ? { kind: 'not_modified', etag } : { kind: 'ok', resource, etag };
  };
  let result = await read();
  if (!waiting || result.kind !== 'not_modified') return result;
  // After the wait, at most two reads: one on a version change, and the final one below.
  const stopAt = () => Math.min(waitUntil, (request.answerBy ?? Number.POSITIVE_INFINITY) - 2 * slowestRead);
  while (now() < stopAt()) {
    await sleep(Math.min(pollMs, Math.max(0, stopAt() - now())));
    const current = await ledger.runVersion(tenantId, runId);
    if (current !== version) {
      version = current;
      result = await read();
      if (result.kind !== 'not_modified') return result;
    }
  }
  // A bump lost between a write and its hint must not make a changed run look unchanged.
  return read();
};

/**
 * The `GET /runs/{runId}` use case, built from its dependencies: the run, or "not modified" once
 * its tag still matches after the wait.
 *
 * @example
 * const follow = followRun(deps); await follow({ tenantId: 'acme', runId, ifNoneMatch: etag, waitSeconds: 20 });
 */
export const followRun =
  (deps: { readonly ledger: Ledger; readonly runForms?: RunFormOptions }, options: WatchOptions = {}) =>
  (request: WatchRequest): Promise<WatchResult> =>
    watchRun(deps.ledger, request, { ...deps.runForms, ...options });
