import type { TimeRange } from '../../lib/contract';
import { checkTiling, hedgePieces, readTimeRange, SplitError, timeAlgebra, type TimeSet } from '../../lib/domain';
import { checkpointWrites, handoverPause, prefixAt, readingSeconds, type CheckpointWrite, type Pause, type Prefix } from './checkpoints';
import { attemptSeconds, callsSpent, notesBetween, type Account, type ScoutModel } from './model';
import type { Random } from './random';

/**
 * How a run treats its CRM subtask. Every policy has the subtask's deadline (seconds from its
 * dispatch); a retry gets a new deadline of its own, a hedge's copies share the original's.
 * `partialFindings` is the CRM kind's declaration (`partialFindings: true` and `ctx.checkpoint`
 * after each model call): with it a timed-out attempt keeps its checkpointed prefix and its retry
 * is sent only the unread rest, and a `subdivide` original hands over at its checkpoint. Without
 * it (the default, as for a kind that declares nothing) checkpoints still record the
 * observation, but a retry and a hedge's pieces cover the whole scope again.
 */
export type Policy = (
  | { readonly kind: 'none'; readonly deadlineSeconds: number }
  | { readonly kind: 'retry'; readonly deadlineSeconds: number; readonly retryDeadlineSeconds: number }
  | { readonly kind: 'replicate'; readonly deadlineSeconds: number; readonly afterSeconds: number }
  | { readonly kind: 'subdivide'; readonly deadlineSeconds: number; readonly afterSeconds: number; readonly pieces: number }
) & { readonly partialFindings?: boolean };

/** `subdivide ×4 at 8 s`. */
export const describePolicy = (policy: Policy): string => {
  if (policy.kind === 'none') return `no retry (${policy.deadlineSeconds} s)`;
  if (policy.kind === 'retry') return `serial retry (${policy.deadlineSeconds} s, then ${policy.retryDeadlineSeconds} s)`;
  if (policy.kind === 'replicate') return `replicate at ${policy.afterSeconds} s`;
  return `subdivide ×${policy.pieces} at ${policy.afterSeconds} s`;
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
  /** The original of a `subdivide` hedge: when the hedge is due (its claim's `handoverDueAt`), which opens the SDK's handover window. */
  readonly handoverAt?: number;
  /** The handover hold: no model call starts from `from` until `until`, so it reads nothing then. */
  readonly pause?: Pause;
  /** Handed over at this instant: every later write is refused (its next model call's reservation first), and it has no outcome. */
  readonly stoppedAt?: number;
  /** The checkpointed prefix it keeps, counted in `group`'s cover from `at` on (a timed-out outcome's, or a handover's). */
  readonly prefix?: { readonly group: string; readonly scope: TimeRange; readonly notes: number; readonly at: number };
}

const finishOf = (copy: Copy): number => copy.start + copy.seconds + (copy.pause === undefined ? 0 : copy.pause.until - copy.pause.from);

/** The copy's `ok` reaches the ledger before its deadline. */
export const finishedInTime = (copy: Copy): boolean => copy.stoppedAt === undefined && finishOf(copy) < copy.deadline;

/** The instant a copy stops reading when nothing else stops it first: its finish, its deadline, or its handover. */
const stopOf = (copy: Copy): number => Math.min(finishOf(copy), copy.deadline, copy.stoppedAt ?? Number.POSITIVE_INFINITY);

/** The first complete cover: which group won, when, and with which copies. */
export interface Cover {
  readonly group: string;
  readonly at: number;
  readonly ids: readonly string[];
}

/**
 * The winner rule: the first complete cover of `scope` wins. A group is a cover once every copy
 * in it is `ok` in time and their scopes, with any checkpointed prefix counted in the group,
 * tile `scope` exactly (checked by the domain's `checkTiling`, the algebra reconcile uses); it
 * completes when its last copy does. The earliest complete group wins; on a tie, the group that
 * appears first (the original before its hedges). `null` when no group covers the scope: the
 * subtask is missing.
 *
 * @example
 * firstCompleteCover(year, [original finishing at 30 (deadline 25), piece p1 at 12, piece p2 at 14])
 * // { group: 'pieces', at: 14, ids: ['C.p1', 'C.p2'] }
 */
export const firstCompleteCover = (scope: TimeRange, copies: readonly Copy[]): Cover | null => {
  const groups = new Map<string, { id: string; scope: TimeRange; ok: boolean; at: number }[]>();
  const join = (group: string, tile: { id: string; scope: TimeRange; ok: boolean; at: number }) => groups.set(group, [...(groups.get(group) ?? []), tile]);
  for (const copy of copies) {
    join(copy.group, { id: copy.id, scope: copy.scope, ok: finishedInTime(copy), at: finishOf(copy) });
    if (copy.prefix) join(copy.prefix.group, { id: `${copy.id} (prefix)`, scope: copy.prefix.scope, ok: true, at: copy.prefix.at });
  }
  let best: Cover | null = null;
  for (const [group, members] of groups) {
    if (!members.every((m) => m.ok)) continue;
    const at = Math.max(...members.map((m) => m.at));
    if (best !== null && at >= best.at) continue;
    if (checkTiling({ dimension: 'time', ...scope }, members).length > 0) continue;
    best = { group, at, ids: members.map((m) => m.id) };
  }
  return best;
};

/**
 * The hedge step: the scopes a due hedge starts. `replicate` starts one more copy of the same
 * scope; `subdivide` cuts the scope into `pieces` time ranges of whole days with the domain's
 * `hedgePieces` (what the ledger's hedge start uses: the planner's `split: { parts }` splitter).
 *
 * @example
 * hedgeScopes({ kind: 'subdivide', pieces: 2, … }, { from: '2025-01-01', toExclusive: '2025-01-05' })
 * // [{ from: '2025-01-01', toExclusive: '2025-01-03' }, { from: '2025-01-03', toExclusive: '2025-01-05' }]
 */
export const hedgeScopes = (policy: Policy, scope: TimeRange): TimeRange[] => {
  if (policy.kind === 'replicate') return [scope];
  if (policy.kind !== 'subdivide') return [];
  return hedgePieces(scope, policy.pieces) as TimeRange[];
};

/**
 * The extra requests a handover costs per hedge. As built, the mark (`handedOverAt`, bound to
 * the original's generation and checkpoint sequence) rides on the hedge's start transaction,
 * which it already writes; docs/hedging.md's design had one UpdateItem of its own.
 */
export const HANDOVER_EXTRA_REQUESTS = 0;

/**
 * The handover at the hedge's start (`at`), as the ledger's `startHedge` cuts it: the
 * original's last stored checkpoint is frozen, its partial findings' prefix is kept, and the
 * pieces split only the rest, when the rest has at least `pieces` days. Otherwise (no
 * checkpoint with partial findings yet, a rest too short) nothing is handed over and the
 * pieces split the whole scope while the original races on.
 */
const handOver = (account: Account, pieces: number, writes: readonly CheckpointWrite[], at: number): { prefix: Prefix; scopes: TimeRange[] } | undefined => {
  const prefix = prefixAt(account, writes, at);
  if (prefix === undefined) return undefined;
  let scopes: TimeRange[];
  try {
    scopes = hedgePieces(prefix.rest, pieces) as TimeRange[];
  } catch (error) {
    if (error instanceof SplitError) return undefined;
    throw error;
  }
  return { prefix, scopes };
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
  /** The part of `calls` that bought nothing counted: copies outside the winning group, less what bought a prefix it counts. */
  readonly lostCalls: number;
  /** A hedge (or retry) was started. */
  readonly hedged: boolean;
  /** Reported covered, yet part of the scope lies outside the winning copies' scopes. */
  readonly silentGap: boolean;
  /** Missing, but some pieces finished: the coverage names the ranges they read. */
  readonly partlyRead: boolean;
  /** A subdivide started: whether its pieces (and a handed-over prefix) tile the scope, by `checkTiling`; null otherwise. */
  readonly piecesTile: boolean | null;
  /** Checkpoints written by every copy (one conditional UpdateItem each). */
  readonly checkpointWrites: number;
  /** The most checkpoints one subtask (one copy) wrote: at most `MAX_CHECKPOINTS`. */
  readonly maxCheckpointWrites: number;
  /** Of `checkpointWrites`, those the handover window wrote early (at most `HANDOVER_WRITES`, on the original). */
  readonly handoverWrites: number;
  /** The original handed over to the pieces at the hedge's start. */
  readonly handedOver: boolean;
  /** A retry was sent only the unread rest after a timed-out attempt's prefix. */
  readonly retriedRest: boolean;
}

/** The draw streams of one run: key 1 the original, 2 the retry, 10 + i the i-th hedge copy. */
export type Draws = (key: number) => Random;

const uncovered = (scope: TimeRange, scopes: readonly TimeRange[]): boolean => {
  const whole = readTimeRange(scope);
  const read = scopes.map((s) => readTimeRange(s)).reduce<TimeSet>((a, b) => timeAlgebra.union(a, b), timeAlgebra.difference(whole, whole));
  return !timeAlgebra.isEmpty(timeAlgebra.difference(whole, read));
};

/**
 * Replays one run of `account` under `policy` on a simulated clock (no waiting): the original
 * at 0; a retry when it missed its deadline (of the unread rest after its checkpointed prefix,
 * for a kind with partial findings); a hedge's copies when it is still running at
 * `afterSeconds`, starting `hedgeDispatchSeconds` later (a `subdivide` original with a
 * checkpoint of partial findings hands over at `afterSeconds`, when the hedge starts, and its
 * pieces split only the rest). The first complete cover ends the subtask and every other copy
 * is refused at that instant, its calls so far charged; with no cover, everything stops at the
 * last deadline. Every copy writes checkpoints on the SDK's schedule while it runs.
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
  const partialFindings = policy.partialFindings === true;
  const schedule = (c: Copy, until: number) => checkpointWrites(model, c, until, partialFindings);
  const deadline = policy.deadlineSeconds;
  let original = copy('C', 'original', account.scope, account.notes, 0, deadline, draws(1));
  if (policy.kind === 'subdivide' && partialFindings) {
    // The SDK's handover window: only a kind with partial findings opens it.
    const windowed = { ...original, handoverAt: policy.afterSeconds };
    const pause = handoverPause(model, windowed);
    original = pause === undefined ? windowed : { ...windowed, pause };
  }
  const copies: Copy[] = [];
  let handedOver = false;
  let retriedRest = false;
  if (policy.kind === 'retry' && !finishedInTime(original)) {
    const start = deadline + model.roundGapSeconds;
    // The timed-out outcome carries the last checkpoint; its prefix counts only with partial findings.
    const kept = partialFindings ? prefixAt(account, schedule(original, deadline), deadline) : undefined;
    if (kept) {
      original = { ...original, prefix: { group: 'retry', scope: kept.prefix, notes: kept.notes, at: deadline } };
      retriedRest = true;
    }
    const rest = kept?.rest ?? account.scope;
    const notes = kept === undefined ? account.notes : account.notes - kept.notes;
    copies.push(copy('C.2', 'retry', rest, notes, start, start + policy.retryDeadlineSeconds, draws(2)));
  }
  if ((policy.kind === 'replicate' || policy.kind === 'subdivide') && finishOf(original) > policy.afterSeconds) {
    const at = policy.afterSeconds;
    const start = at + model.hedgeDispatchSeconds;
    let scopes = hedgeScopes(policy, account.scope);
    if (policy.kind === 'subdivide' && partialFindings) {
      const handover = handOver(account, policy.pieces, schedule(original, at), at);
      if (handover) {
        const { prefix } = handover;
        original = { ...original, stoppedAt: at, prefix: { group: 'subdivide', scope: prefix.prefix, notes: prefix.notes, at } };
        scopes = handover.scopes;
        handedOver = true;
      }
    }
    const notesIn = (scope: TimeRange): number =>
      policy.kind === 'replicate' ? account.notes : notesBetween(account, ...(readTimeRange(scope).bounds as [number, number]));
    scopes.forEach((scope, i) => {
      copies.push(copy(`C.${policy.kind === 'replicate' ? 'r' : 'p'}${i + 1}`, policy.kind, scope, notesIn(scope), start, deadline, draws(10 + i)));
    });
  }
  copies.unshift(original);
  const pieces = copies.filter((c) => c.group === 'subdivide');
  const cover = firstCompleteCover(account.scope, copies);
  const end = cover?.at ?? Math.max(...copies.map((c) => c.deadline));
  const ranFor = (c: Copy): number => readingSeconds(c, Math.min(stopOf(c), end));
  const spent = (c: Copy): number => callsSpent(model, c.notes, c.seconds, ranFor(c));
  // A loser's calls bought nothing, except the prefix it keeps in the winning cover.
  const lost = (c: Copy): number =>
    Math.max(0, spent(c) - (c.prefix !== undefined && c.prefix.group === cover?.group ? Math.ceil(c.prefix.notes / model.notesPerCall) : 0));
  const written = copies.map((c) => schedule(c, Math.min(stopOf(c), end)));
  const writes = written.map((w) => w.length);
  const winners = copies.filter((c) => c.group === cover?.group).map((c) => c.scope);
  const prefixes = copies.flatMap((c) => (c.prefix !== undefined && c.prefix.group === cover?.group ? [c.prefix.scope] : []));
  const pieceTiles = [
    ...pieces.map((c) => ({ id: c.id, scope: c.scope })),
    ...copies.flatMap((c) => (c.prefix?.group === 'subdivide' ? [{ id: `${c.id} (prefix)`, scope: c.prefix.scope }] : [])),
  ];
  return {
    covered: cover !== null,
    winner: cover?.group ?? null,
    seconds: end + model.overheadSeconds,
    calls: copies.reduce((total, c) => total + spent(c), 0),
    lostCalls: copies.filter((c) => c.group !== cover?.group).reduce((total, c) => total + lost(c), 0),
    hedged: copies.length > 1,
    silentGap: cover !== null && uncovered(account.scope, [...winners, ...prefixes]),
    partlyRead: cover === null && pieces.some(finishedInTime),
    piecesTile: pieces.length === 0 ? null : checkTiling({ dimension: 'time', ...account.scope }, pieceTiles).length === 0,
    checkpointWrites: writes.reduce((a, b) => a + b, 0),
    maxCheckpointWrites: Math.max(...writes),
    handoverWrites: written.reduce((n, w) => n + w.filter((x) => x.handover).length, 0),
    handedOver,
    retriedRest,
  };
};
