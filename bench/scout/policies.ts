import type { TimeRange } from '../../lib/contract';
import { checkTiling, DAY_MS, readTimeRange, timeAlgebra, timeSet, type TimeSet } from '../../lib/domain';
import { attemptSeconds, callsSpent, notesBetween, type Account, type ScoutModel } from './model';
import type { Random } from './random';

/**
 * How a run treats its CRM subtask. Every policy has the subtask's deadline (seconds from its
 * dispatch); a retry gets a new deadline of its own, a hedge's copies share the original's.
 */
export type Policy =
  | { readonly kind: 'none'; readonly deadlineSeconds: number }
  | { readonly kind: 'retry'; readonly deadlineSeconds: number; readonly retryDeadlineSeconds: number }
  | { readonly kind: 'replicate'; readonly deadlineSeconds: number; readonly afterSeconds: number }
  | {
      readonly kind: 'subdivide';
      readonly deadlineSeconds: number;
      readonly afterSeconds: number;
      readonly pieces: number;
      /**
       * What-if, beyond what tessera does: the original checkpoints what it has read (it reads
       * oldest first) and stops, and the pieces split only the unread rest. Without it the
       * original keeps going and the pieces split its whole scope: the hedge as tessera specifies it.
       */
      readonly unreadOnly?: boolean;
    };

/** `subdivide ×4 at 8 s`. */
export const describePolicy = (policy: Policy): string => {
  if (policy.kind === 'none') return `no retry (${policy.deadlineSeconds} s)`;
  if (policy.kind === 'retry') return `serial retry (${policy.deadlineSeconds} s, then ${policy.retryDeadlineSeconds} s)`;
  if (policy.kind === 'replicate') return `replicate at ${policy.afterSeconds} s`;
  return `subdivide ${policy.unreadOnly ? 'unread rest ' : ''}×${policy.pieces} at ${policy.afterSeconds} s`;
};

/**
 * One copy of the CRM subtask on the simulated clock, in seconds from the run's dispatch. The
 * copies of one `group` cover the scope together: the original alone, a retry or a replica
 * alone, or every piece of a subdivide.
 */
export interface Copy {
  readonly id: string;
  readonly group: string;
  readonly scope: TimeRange;
  readonly notes: number;
  readonly start: number;
  /** How long it takes when nothing stops it. */
  readonly seconds: number;
  /** Its absolute deadline: an outcome at or after it is refused. */
  readonly deadline: number;
  /** Stopped after `seconds` without an outcome (a what-if original that handed over). */
  readonly stopped?: boolean;
}

const finishOf = (copy: Copy): number => copy.start + copy.seconds;

/** The copy's `ok` reaches the ledger before its deadline. */
export const finishedInTime = (copy: Copy): boolean => copy.stopped !== true && finishOf(copy) < copy.deadline;

/** The first complete cover: which group won, when, and with which copies. */
export interface Cover {
  readonly group: string;
  readonly at: number;
  readonly ids: readonly string[];
}

/**
 * The winner rule: the first complete cover of `scope` wins. A group is a cover once every copy
 * in it is `ok` in time and their scopes tile `scope` exactly (checked by the domain's
 * `checkTiling`, the algebra reconcile uses); it completes when its last copy does. The earliest
 * complete group wins; on a tie, the group that appears first (the original before its hedges).
 * `null` when no group covers the scope: the subtask is missing.
 *
 * @example
 * firstCompleteCover(year, [original finishing at 30 (deadline 25), piece p1 at 12, piece p2 at 14])
 * // { group: 'pieces', at: 14, ids: ['C.p1', 'C.p2'] }
 */
export const firstCompleteCover = (scope: TimeRange, copies: readonly Copy[]): Cover | null => {
  const groups = new Map<string, Copy[]>();
  for (const copy of copies) groups.set(copy.group, [...(groups.get(copy.group) ?? []), copy]);
  let best: Cover | null = null;
  for (const [group, members] of groups) {
    if (!members.every(finishedInTime)) continue;
    const at = Math.max(...members.map(finishOf));
    if (best !== null && at >= best.at) continue;
    const tiles = members.map((copy) => ({ id: copy.id, scope: copy.scope }));
    if (checkTiling({ dimension: 'time', ...scope }, tiles).length > 0) continue;
    best = { group, at, ids: members.map((copy) => copy.id) };
  }
  return best;
};

/**
 * The hedge step: the scopes a due hedge starts. `replicate` starts one more copy of the same
 * scope; `subdivide` cuts the scope into `pieces` time ranges of whole days with the planner's
 * own splitter (`timeAlgebra.split`, what `split: { parts }` uses). This is the one place a
 * shared hedge module would plug in.
 *
 * @example
 * hedgeScopes({ kind: 'subdivide', pieces: 2, … }, { from: '2025-01-01', toExclusive: '2025-01-05' })
 * // [{ from: '2025-01-01', toExclusive: '2025-01-03' }, { from: '2025-01-03', toExclusive: '2025-01-05' }]
 */
export const hedgeScopes = (policy: Policy, scope: TimeRange): TimeRange[] => {
  if (policy.kind === 'replicate') return [scope];
  if (policy.kind !== 'subdivide') return [];
  const set = readTimeRange(scope);
  // Only the what-if's unread rest can be shorter than `pieces` days: it is cut into days.
  const days = Math.floor(((set.bounds[1] as number) - (set.bounds[0] as number)) / DAY_MS);
  return timeAlgebra.split(set, Math.min(policy.pieces, days)).flatMap((piece) => timeAlgebra.toScopes(piece) as TimeRange[]);
};

/**
 * The what-if handover at `at`: the original, reading oldest first at an even pace, has read
 * every note before the first unread note's day; it records that prefix as its outcome (part of
 * the subdivide's cover) and stops. Nothing read yet: it stops without an outcome. The pieces
 * then split the rest, from that day on.
 */
const handOver = (account: Account, original: Copy, at: number): { original: Copy; rest: TimeRange } => {
  const read = Math.floor(account.notes * (at / original.seconds));
  const whole = readTimeRange(account.scope);
  const [from, to] = whole.bounds as [number, number];
  // `at` is before the original's finish, so note `read` exists, and its day starts before `to`.
  const cut = from + Math.floor(((account.noteTimes()[read] as number) - from) / DAY_MS) * DAY_MS;
  const stoppedAt = { ...original, notes: read, seconds: at };
  if (cut <= from) return { original: { ...stoppedAt, stopped: true }, rest: account.scope };
  const [prefix] = timeAlgebra.toScopes(timeSet(whole.format, from, cut)) as [TimeRange];
  const [rest] = timeAlgebra.toScopes(timeSet(whole.format, cut, to)) as [TimeRange];
  return { original: { ...stoppedAt, group: 'subdivide', scope: prefix }, rest };
};

/** What one replayed run came to. */
export interface RunResult {
  /** The CRM subtask's scope was covered: some group won. */
  readonly covered: boolean;
  /** The winning group (`original`, `retry`, `replicate`, `subdivide`), or null. */
  readonly winner: string | null;
  /** End to end: the CRM subtask's end plus the run's own overhead. */
  readonly seconds: number;
  /** Model calls of every copy, losers included (their spend stays charged). */
  readonly calls: number;
  /** The part of `calls` spent by copies outside the winning group (all of it when nothing won). */
  readonly lostCalls: number;
  /** A hedge (or retry) was started. */
  readonly hedged: boolean;
  /** Reported covered, yet part of the scope lies outside the winning copies' scopes. */
  readonly silentGap: boolean;
  /** Missing, but some pieces finished: the coverage names the ranges they read. */
  readonly partlyRead: boolean;
  /** A subdivide started: whether its pieces (and a what-if's read prefix) tile the scope, by `checkTiling`; null otherwise. */
  readonly piecesTile: boolean | null;
}

/** The draw streams of one run: key 1 the original, 2 the retry, 10 + i the i-th hedge copy. */
export type Draws = (key: number) => Random;

const uncovered = (scope: TimeRange, copies: readonly Copy[]): boolean => {
  const whole = readTimeRange(scope);
  const read = copies.map((copy) => readTimeRange(copy.scope)).reduce<TimeSet>((a, b) => timeAlgebra.union(a, b), timeAlgebra.difference(whole, whole));
  return !timeAlgebra.isEmpty(timeAlgebra.difference(whole, read));
};

/**
 * Replays one run of `account` under `policy` on a simulated clock (no waiting): the original
 * at 0; a retry when it missed its deadline; a hedge's copies when it is still running at
 * `afterSeconds`, starting `hedgeDispatchSeconds` later. The first complete cover ends the
 * subtask and every other copy is refused at that instant, its calls so far charged; with no
 * cover, everything stops at the last deadline.
 */
export const replayRun = (model: ScoutModel, policy: Policy, account: Account, draws: Draws): RunResult => {
  const copy = (id: string, group: string, scope: TimeRange, notes: number, start: number, deadline: number, random: Random): Copy => ({
    id,
    group,
    scope,
    notes,
    start,
    seconds: attemptSeconds(model, notes, random),
    deadline,
  });
  const deadline = policy.deadlineSeconds;
  const original = copy('C', 'original', account.scope, account.notes, 0, deadline, draws(1));
  const copies = [original];
  if (policy.kind === 'retry' && !finishedInTime(original)) {
    const start = deadline + model.roundGapSeconds;
    copies.push(copy('C.2', 'retry', account.scope, account.notes, start, start + policy.retryDeadlineSeconds, draws(2)));
  }
  if ((policy.kind === 'replicate' || policy.kind === 'subdivide') && finishOf(original) > policy.afterSeconds) {
    const start = policy.afterSeconds + model.hedgeDispatchSeconds;
    let rest = account.scope;
    if (policy.kind === 'subdivide' && policy.unreadOnly === true && finishOf(original) > start) {
      const handover = handOver(account, original, start);
      copies[0] = handover.original;
      rest = handover.rest;
    }
    const notesIn = (scope: TimeRange): number =>
      policy.kind === 'replicate' ? account.notes : notesBetween(account, ...(readTimeRange(scope).bounds as [number, number]));
    hedgeScopes(policy, rest).forEach((scope, i) => {
      copies.push(copy(`C.${policy.kind === 'replicate' ? 'r' : 'p'}${i + 1}`, policy.kind, scope, notesIn(scope), start, deadline, draws(10 + i)));
    });
  }
  const pieces = copies.filter((c) => c.group === 'subdivide');
  const cover = firstCompleteCover(account.scope, copies);
  const end = cover?.at ?? Math.max(...copies.map((c) => c.deadline));
  const spent = (c: Copy): number => callsSpent(model, c.notes, c.seconds, Math.min(finishOf(c), end, c.deadline) - c.start);
  const sum = (list: readonly Copy[]): number => list.reduce((total, c) => total + spent(c), 0);
  return {
    covered: cover !== null,
    winner: cover?.group ?? null,
    seconds: end + model.overheadSeconds,
    calls: sum(copies),
    lostCalls: sum(copies.filter((c) => c.group !== cover?.group)),
    hedged: copies.length > 1,
    silentGap:
      cover !== null &&
      uncovered(
        account.scope,
        copies.filter((c) => cover.ids.includes(c.id)),
      ),
    partlyRead: cover === null && pieces.some(finishedInTime),
    piecesTile:
      pieces.length === 0
        ? null
        : checkTiling(
            { dimension: 'time', ...account.scope },
            pieces.map((c) => ({ id: c.id, scope: c.scope })),
          ).length === 0,
  };
};
