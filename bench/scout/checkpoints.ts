import type { Checkpoint, TimeRange } from '../../lib/contract';
import { DAY_MS, readTimeRange, splitAtCheckpoint, timeAlgebra, timeSet } from '../../lib/domain';
import { DEFAULT_CHECKPOINT_POLICY, type CheckpointPolicy } from '../../lib/workers/checkpointer';
import { notesBetween, type Account, type ScoutModel } from './model';

/**
 * The SDK's checkpoint schedule on the replay's clock, with the SDK's own policy
 * (`DEFAULT_CHECKPOINT_POLICY`, lib/workers/checkpointer.ts): a write is due once at least
 * `everyRecords` new records were read, or new partial findings reported, _and_ `everyMs`
 * passed since the last write (or the start), whichever comes later; the pending write is
 * flushed `flushBeforeDeadlineMs` before the deadline; at most `maxWrites` per subtask. Each
 * write is one conditional UpdateItem of the subtask item.
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
}

/** The part of a copy the schedule depends on: when it starts, how long it reads, how much, and its deadline. */
export interface Reader {
  readonly start: number;
  readonly seconds: number;
  readonly notes: number;
  readonly deadline: number;
}

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
  const stop = Math.min(until, reader.start + reader.seconds);
  // Even pace: the n-th note is read at start + n / notes × seconds.
  const noteAt = (n: number): number => reader.start + (n / reader.notes) * reader.seconds;
  const readBy = (t: number): number =>
    t <= reader.start ? 0 : Math.min(reader.notes, Math.floor((reader.notes * (t - reader.start)) / reader.seconds + 1e-9));
  const partialBy = (t: number): number => Math.floor(readBy(t) / model.notesPerCall) * model.notesPerCall;
  const writes: CheckpointWrite[] = [];
  const record = (at: number): void => void writes.push({ at, records: readBy(at), partialNotes: partialFindings ? partialBy(at) : null });
  let lastAt = reader.start;
  let lastRecords = 0;
  let lastPartial = 0;
  while (writes.length < policy.maxWrites) {
    const triggers: number[] = [];
    const nextPartial = (Math.floor(lastPartial / model.notesPerCall) + 1) * model.notesPerCall;
    if (partialFindings && nextPartial <= reader.notes) triggers.push(noteAt(nextPartial));
    if (lastRecords + policy.everyRecords <= reader.notes) triggers.push(noteAt(lastRecords + policy.everyRecords));
    if (triggers.length === 0) break;
    const at = Math.max(lastAt + everySeconds, Math.min(...triggers));
    if (at >= flushAt || at >= stop) break;
    record(at);
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
