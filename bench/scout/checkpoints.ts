import type { Checkpoint, TimeRange } from '../../lib/contract';
import { DAY_MS, readTimeRange, splitAtCheckpoint, timeAlgebra, timeSet } from '../../lib/domain';
import { DEFAULT_CHECKPOINT_POLICY, HANDOVER_WRITES, type CheckpointPolicy } from '../../lib/workers/checkpointer';
import { notesBetween, type Account, type ScoutModel } from './model';

/**
 * The SDK's checkpoint schedule on the replay's clock, with the SDK's own policy
 * (`DEFAULT_CHECKPOINT_POLICY`, lib/workers/checkpointer.ts): a write is due once at least
 * `everyRecords` new records were read, or new partial findings reported, _and_ `everyMs`
 * passed since the last write (or the start), whichever comes later; the pending write is
 * flushed `flushBeforeDeadlineMs` before the deadline; at most `maxWrites` per subtask. Each
 * write is one conditional UpdateItem of the subtask item.
 *
 * The handover window, on the original of a `subdivide` hedge (its claim's `handoverDueAt`, here
 * `handoverAt`): from `handoverWindowMs` before that instant until `handoverHoldMs` after it, a
 * model call that would still run at the instant (by the longest call so far: here every call
 * reads `notesPerCall` notes, so all take as long) waits until the window closes
 * ({@link handoverPause}: the reading pauses), and the pending findings are written at once when
 * it starts to wait and `flushBeforeHandoverMs` before the instant, at most `HANDOVER_WRITES`.
 *
 * The CRM kind, when it declares partial findings, reports them (`ctx.checkpoint`) after every
 * model call, that is every `notesPerCall` notes, over the whole days it has read: its tool asks
 * for one day of notes at a time, oldest first, so the findings rest on the days before the
 * first note it has not yet accounted for. Two simplifications: a write lands the instant it is
 * due (a write takes milliseconds, the schedule seconds), and the record threshold is seen the
 * instant it is crossed (the SDK looks at most `everyRecords` reports later; with partial
 * findings every `notesPerCall` < `everyRecords` notes, the partials make writes due first).
 */
export interface CheckpointWrite {
  /** Seconds from the run's dispatch. */
  readonly at: number;
  /** Notes read by then (the checkpoint's `observed.recordCount`). */
  readonly records: number;
  /** Notes the partial findings account for (a multiple of `notesPerCall`); null without partial findings. */
  readonly partialNotes: number | null;
  /** Written early by the handover window (a call waits, or the handover is near), off the `everyMs` schedule. */
  readonly handover: boolean;
}

/** The part of a copy the schedule depends on: when it starts, how long it reads, how much, and its deadline. */
export interface Reader {
  readonly start: number;
  readonly seconds: number;
  readonly notes: number;
  readonly deadline: number;
  /** When its `subdivide` hedge is due (the original of a hedged subtask; a copy never hedges): it opens the handover window. */
  readonly handoverAt?: number;
  /** The handover hold: it reads nothing from `from` until `until` ({@link handoverPause}). */
  readonly pause?: Pause;
}

/** A pause in a copy's reading, in seconds from the run's dispatch. */
export interface Pause {
  readonly from: number;
  readonly until: number;
}

/** How long a copy has read by `t`: the time since its start, less its pause. */
export const readingSeconds = (reader: Pick<Reader, 'start' | 'pause'>, t: number): number => {
  const pause = reader.pause;
  const paused = pause === undefined ? 0 : Math.max(0, Math.min(t, pause.until) - pause.from);
  return Math.max(0, t - reader.start - paused);
};

/**
 * The SDK's handover hold on a copy that reads at an even pace with one model call per
 * `notesPerCall` notes (call j in flight while notes (j − 1)·n to j·n are read, so each takes
 * d = n / notes × seconds): the first call j ≥ 2 (the first has no measure yet, so it goes) that
 * starts in the window, from `handoverAt - handoverWindowMs`, and would still run at `handoverAt`
 * (its start + d reaches it) waits until the window closes (`handoverAt + handoverHoldMs`, at
 * most the deadline), unless it is the copy's last call (its tools have then answered the whole
 * assignment). Undefined when no call waits.
 *
 * @example
 * // 600 notes in 36.5 s from 0, hedge due at 11 s: d = 20 / 600 × 36.5 = 1.217 s; call 10 would
 * // start after note 180, at 10.95 s, and end at 12.17 s, past 11 s: it waits from 10.95 s until 12.5 s.
 * handoverPause(model, { start: 0, seconds: 36.5, notes: 600, deadline: 25, handoverAt: 11 }) // { from: 10.95, until: 12.5 }
 */
export const handoverPause = (model: ScoutModel, reader: Reader, policy: CheckpointPolicy = DEFAULT_CHECKPOINT_POLICY): Pause | undefined => {
  if (reader.handoverAt === undefined) return undefined;
  const until = Math.min(reader.handoverAt + policy.handoverHoldMs / 1000, reader.deadline);
  const perCall = (model.notesPerCall / reader.notes) * reader.seconds;
  const waitsFrom = Math.max(reader.handoverAt - policy.handoverWindowMs / 1000, reader.handoverAt - perCall);
  // Call j starts at start + (j − 1) · perCall; the first at or after `waitsFrom`, and never the first call.
  const j = Math.max(2, Math.ceil((waitsFrom - reader.start) / perCall - 1e-9) + 1);
  // The last call goes too: the CRM tool fetches the notes a call reads before it, so by then the tools answered the whole assignment.
  if (j * model.notesPerCall >= reader.notes) return undefined;
  const from = reader.start + (((j - 1) * model.notesPerCall) / reader.notes) * reader.seconds;
  return from < until ? { from, until } : undefined;
};

/**
 * Every checkpoint a copy writes while it runs, before `until` (its finish, the deadline, or
 * the instant it was refused or handed over), in order.
 *
 * @example
 * // 600 notes in 36.5 s from 0, deadline 25 s, partial findings every 20 notes:
 * checkpointWrites(model, { start: 0, seconds: 36.5, notes: 600, deadline: 25 }, 25, true).map((w) => w.at)
 * // [5, 10, 15, 20, 24]: every 5 s, then the flush 1 s before the deadline
 */
export const checkpointWrites = (
  model: ScoutModel,
  reader: Reader,
  until: number,
  partialFindings: boolean,
  policy: CheckpointPolicy = DEFAULT_CHECKPOINT_POLICY,
): CheckpointWrite[] => {
  const everySeconds = policy.everyMs / 1000;
  const flushAt = reader.deadline - policy.flushBeforeDeadlineMs / 1000;
  const pause = reader.pause;
  const pausedFor = pause === undefined ? 0 : pause.until - pause.from;
  const stop = Math.min(until, reader.start + reader.seconds + pausedFor);
  // Even pace: the n-th note is read at start + n / notes × seconds, later by the pause once past it.
  const noteAt = (n: number): number => {
    const at = reader.start + (n / reader.notes) * reader.seconds;
    return pause !== undefined && at > pause.from + 1e-9 ? at + pausedFor : at;
  };
  const readBy = (t: number): number => Math.min(reader.notes, Math.floor((reader.notes * readingSeconds(reader, t)) / reader.seconds + 1e-9));
  const partialBy = (t: number): number => Math.floor(readBy(t) / model.notesPerCall) * model.notesPerCall;
  const writes: CheckpointWrite[] = [];
  const record = (at: number, handover = false): void =>
    void writes.push({ at, records: readBy(at), partialNotes: partialFindings ? partialBy(at) : null, handover });
  let lastAt = reader.start;
  let lastRecords = 0;
  let lastPartial = 0;
  // The handover's early writes of pending findings: when a call starts to wait (the pause), and from `flushBeforeHandoverMs` before it.
  const handoverAt = partialFindings ? reader.handoverAt : undefined;
  const flushHandoverAt = handoverAt === undefined ? undefined : handoverAt - policy.flushBeforeHandoverMs / 1000;
  let handoverWrites = 0;
  while (writes.length < policy.maxWrites) {
    const triggers: number[] = [];
    const nextPartial = (Math.floor(lastPartial / model.notesPerCall) + 1) * model.notesPerCall;
    if (partialFindings && nextPartial <= reader.notes) triggers.push(noteAt(nextPartial));
    if (lastRecords + policy.everyRecords <= reader.notes) triggers.push(noteAt(lastRecords + policy.everyRecords));
    if (triggers.length === 0) break;
    const scheduled = Math.max(lastAt + everySeconds, Math.min(...triggers));
    const early: number[] = [];
    if (flushHandoverAt !== undefined && handoverWrites < HANDOVER_WRITES && partialFindings && nextPartial <= reader.notes) {
      const dirtyAt = noteAt(nextPartial);
      if (pause !== undefined && dirtyAt <= pause.from + 1e-9) early.push(pause.from);
      const near = Math.max(flushHandoverAt, dirtyAt);
      if (near < (handoverAt as number)) early.push(near);
    }
    const at = Math.min(scheduled, ...early);
    if (at >= flushAt || at >= stop) break;
    const handover = early.includes(at) || (flushHandoverAt !== undefined && at >= flushHandoverAt && at < (handoverAt as number));
    if (handover) handoverWrites += 1;
    record(at, handover && at < scheduled);
    lastAt = at;
    lastRecords = (writes.at(-1) as CheckpointWrite).records;
    lastPartial = (writes.at(-1) as CheckpointWrite).partialNotes ?? lastPartial;
  }
  // The flush before the deadline: whatever was read since the last write, if the copy still runs.
  if (writes.length < policy.maxWrites && flushAt > reader.start && flushAt < stop && readBy(flushAt) > lastRecords) record(flushAt);
  return writes;
};

/** A checkpoint's prefix: the region its partial findings rest on, and the unread rest, as the domain splits them. */
export interface Prefix {
  readonly prefix: TimeRange;
  readonly rest: TimeRange;
  /** Notes in the prefix: read once, and never again. */
  readonly notes: number;
}

/**
 * What the last checkpoint written before `at` keeps of `account`: its partial findings rest on
 * the whole days before the first note they do not account for; the domain's
 * `splitAtCheckpoint` (what reconcile and the retry planner use) cuts the scope there. Undefined
 * when no checkpoint with partial findings was written by `at`, or it rests on no whole day.
 */
export const prefixAt = (account: Account, writes: readonly CheckpointWrite[], at: number): Prefix | undefined => {
  const last = writes.filter((w) => w.at < at).at(-1);
  if (last?.partialNotes === null || last?.partialNotes === undefined || last.partialNotes === 0) return undefined;
  const whole = readTimeRange(account.scope);
  const [from, to] = whole.bounds as [number, number];
  const first = account.noteTimes()[last.partialNotes];
  const cut = first === undefined ? to : from + Math.floor((first - from) / DAY_MS) * DAY_MS;
  if (cut <= from) return undefined;
  const covered = timeAlgebra.toScopes(timeSet(whole.format, from, cut)) as TimeRange[];
  const observed = { minDate: null, maxDate: null, recordCount: last.records };
  const split = splitAtCheckpoint(account.scope, { partial: { covered, observed, findings: null } } as Pick<Checkpoint, 'partial'>);
  if (split === undefined) return undefined;
  const prefix = split.prefix[0] as TimeRange;
  return { prefix, rest: split.rest as TimeRange, notes: notesBetween(account, from, cut) };
};
