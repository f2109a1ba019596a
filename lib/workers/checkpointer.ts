/**
 * The SDK's checkpoint writer: while a worker runs, it stores what the tools have observed so far
 * (and the kind's partial findings, when it reports them with `ctx.checkpoint`) through a
 * `CheckpointPort` (the ledger's `writeCheckpoint(claim, …)`). Worker code does nothing for the
 * observation part: the scoped tools report each answered request here.
 *
 * Bounded: a write is due when at least `everyRecords` new records were read (or new partial
 * findings were reported) and `everyMs` passed since the last write, whichever comes later; one
 * pending write is flushed when it becomes due and `flushBeforeDeadlineMs` before the deadline;
 * at most `maxWrites` per subtask across its generations. A worker that finishes before its
 * first write is due writes none: the no-op path costs nothing more.
 *
 * The handover window: a subtask whose claim says when it may hand over to its `subdivide` hedge
 * pieces (`handoverAtMs`), of a kind with partial findings, gets ready for the hedge's cut. From
 * `handoverWindowMs` before that instant until `handoverHoldMs` after it, a model call that would
 * still be running at the instant (by the run's longest call so far) waits until the window ends
 * ({@link Checkpointer.holdModelCall}), unless the tools have answered the whole assignment; and
 * the pending findings are written at once when a call starts to wait and
 * `flushBeforeHandoverMs` before the instant: at most {@link HANDOVER_WRITES} writes beside the
 * schedule per run, within `maxWrites`. So the hedge cuts its pieces from what was read, with no
 * call in flight whose records the pieces read again, not from a checkpoint up to `everyMs` old.
 */
import type { Checkpoint, CheckpointInput, Dimension, Observed, Scope, Usage } from '../contract';
import { algebraFor, MAX_CHECKPOINTS } from '../domain';
import type { SetTimer } from './session';

/** What a store may answer a checkpoint write with: `handedOver` when the subtask handed over to its hedge pieces. */
export interface CheckpointWriteResult {
  readonly handedOver?: boolean;
}

/**
 * Where checkpoints are stored: the ledger's `writeCheckpoint(claim, …)`. A write answered
 * `{ handedOver: true }` means the subtask handed over to its hedge pieces (docs/hedging.md,
 * "Handover"): the checkpointer stops and tells the run, which stops the worker.
 */
export interface CheckpointPort {
  write(checkpoint: CheckpointInput): Promise<CheckpointWriteResult | unknown>;
}

const handedOver = (result: unknown): boolean => typeof result === 'object' && result !== null && (result as CheckpointWriteResult).handedOver === true;

/** When checkpoints are written. */
export interface CheckpointPolicy {
  /** New records read since the last write before another is due. @default 100 */
  readonly everyRecords: number;
  /** Milliseconds since the last write (or the start) before another is due. @default 5000 */
  readonly everyMs: number;
  /** The pending checkpoint is flushed this long before the deadline, when the ledger still takes it. @default 1000 */
  readonly flushBeforeDeadlineMs: number;
  /** The handover window opens this long before `handoverAtMs`. @default 5000 */
  readonly handoverWindowMs: number;
  /** The handover window closes this long after `handoverAtMs`: the hedge's start lands in it. @default 1500 */
  readonly handoverHoldMs: number;
  /** Pending partial findings are written this long before `handoverAtMs`, whatever `everyMs` says. @default 250 */
  readonly flushBeforeHandoverMs: number;
  /** Writes per subtask, across its generations. @default MAX_CHECKPOINTS (32) */
  readonly maxWrites: number;
}

/** @example DEFAULT_CHECKPOINT_POLICY.everyMs // 5000 */
export const DEFAULT_CHECKPOINT_POLICY: CheckpointPolicy = Object.freeze({
  everyRecords: 100,
  everyMs: 5_000,
  flushBeforeDeadlineMs: 1_000,
  handoverWindowMs: 5_000,
  handoverHoldMs: 1_500,
  flushBeforeHandoverMs: 250,
  maxWrites: MAX_CHECKPOINTS,
});

/**
 * Writes the handover window adds at most, beside the schedule: the findings pending when a
 * model call starts to wait, and those pending `flushBeforeHandoverMs` before the handover.
 */
export const HANDOVER_WRITES = 2;

/** What the checkpointer reads of the running subtask. */
export interface CheckpointSource {
  readonly dimension: Dimension;
  readonly assigned: Scope;
  observed(): Observed;
  sources(): string[];
  usage(): Usage;
}

/** Options of {@link openCheckpointer}. */
export interface CheckpointerOptions {
  readonly port: CheckpointPort;
  readonly generation: number;
  /** The last checkpoint stored for the subtask (an earlier generation's): sequence numbers go on from it, and its covered region is kept. */
  readonly previous?: Checkpoint | undefined;
  readonly policy?: Partial<CheckpointPolicy> | undefined;
  readonly deadlineMs: number;
  readonly now: () => number;
  readonly setTimer: SetTimer;
  /** Called once when a write is answered `handedOver`: the run stops its worker. */
  readonly onHandedOver?: () => void;
  /** When the subtask may hand over to its `subdivide` hedge pieces (the claim's `handoverDueAt`), for a kind with partial findings: opens the handover window. */
  readonly handoverAtMs?: number | undefined;
}

/** The running checkpointer of one subtask run. */
export interface Checkpointer {
  /** A tool answered a request for `scope` (a whole requested range, an id, lines). */
  covered(scope: Scope): void;
  /** The kind reported findings over everything read so far (`ctx.checkpoint`). */
  partial(findings: unknown): void;
  /** What was covered so far. */
  coveredScopes(): Scope[];
  /** Checkpoints written by this run. */
  written(): number;
  /**
   * Resolves when a model call may start: at once, except in the handover window for a call that
   * would still run at the handover by `expectedMs` (the run's longest call so far), or any call
   * from the handover on: that one waits until the window closes, and the pending findings are
   * written at once.
   */
  holdModelCall(expectedMs: number): Promise<void>;
  /** Stops writing (the run ended). */
  close(): void;
}

/**
 * Opens the checkpointer of one run.
 *
 * @example
 * const checkpointer = openCheckpointer(source, { port: { write: (c) => ledger.writeCheckpoint(claim, c) }, generation: claim.generation, … });
 */
export const openCheckpointer = (source: CheckpointSource, options: CheckpointerOptions): Checkpointer => {
  const policy = { ...DEFAULT_CHECKPOINT_POLICY, ...options.policy };
  const algebra = algebraFor(source.dimension);
  const assigned = algebra.normalise(source.assigned);
  let covered = algebra.difference(assigned, assigned);
  for (const scope of options.previous?.partial?.covered ?? []) covered = algebra.union(covered, algebra.normalise(scope));
  let sequence = options.previous?.sequence ?? 0;
  let lastAt = options.now();
  let lastRecords = 0;
  let partial: Checkpoint['partial'] = options.previous?.partial;
  let partialDirty = false;
  let dirty = false;
  let writes = 0;
  let closed = false;
  let inFlight: Promise<void> | undefined;
  let cancelTimer: (() => void) | undefined;
  const handoverAt = options.handoverAtMs;
  let handoverWrites = 0;
  // A model call waits: its pending findings are written at once.
  let holding = false;
  /** The handover takes an early write of pending findings now: a call waits, or the handover is near. */
  const handoverDue = (now: number): boolean => {
    if (handoverAt === undefined || !partialDirty || handoverWrites >= HANDOVER_WRITES) return false;
    return holding || (now >= handoverAt - policy.flushBeforeHandoverMs && now < handoverAt);
  };
  // Regions reported since they were last folded in: a worker reports one per record, and folding
  // each one at once would cost the whole covered region per record (quadratic over 50,000 ids).
  let pending: ReturnType<typeof algebra.normalise>[] = [];
  let reportsSinceConsidered = 0;
  const settled = (): typeof covered => {
    if (pending.length === 0) return covered;
    // Pairwise, level by level: each region takes part in log2(n) unions, not n.
    let level = pending;
    while (level.length > 1) {
      const next: typeof level = [];
      for (let i = 0; i < level.length; i += 2) next.push(i + 1 < level.length ? algebra.union(level[i]!, level[i + 1]!) : level[i]!);
      level = next;
    }
    covered = algebra.union(covered, algebra.intersect(level[0]!, assigned));
    pending = [];
    return covered;
  };

  const build = (): CheckpointInput => ({
    generation: options.generation,
    sequence: sequence + 1,
    writtenAt: new Date(options.now()).toISOString(),
    covered: algebra.toScopes(settled()),
    observed: source.observed(),
    sources: source.sources(),
    sourcesReached: source.sources().length,
    usage: source.usage(),
    ...(partial === undefined ? {} : { partial }),
  });
  const due = (final: boolean): boolean => {
    if (closed || !dirty || sequence >= policy.maxWrites) return false;
    if (final || handoverDue(options.now())) return true;
    const records = source.observed().recordCount - lastRecords;
    return (partialDirty || records >= policy.everyRecords) && options.now() - lastAt >= policy.everyMs;
  };
  const write = (): void => {
    // Counted when the handover made it due (or would have): at most HANDOVER_WRITES such writes.
    if (handoverDue(options.now())) handoverWrites += 1;
    holding = false;
    const checkpoint = build();
    sequence += 1;
    writes += 1;
    lastAt = options.now();
    lastRecords = checkpoint.observed.recordCount;
    dirty = false;
    partialDirty = false;
    // A refused write (lease lost, run ended, deadline passed) stops checkpointing: the outcome write meets the same refusal.
    inFlight = options.port.write(checkpoint).then(
      (result) => {
        if (!handedOver(result) || closed) return;
        closed = true;
        options.onHandedOver?.();
      },
      () => void (closed = true),
    );
    void inFlight.finally(() => {
      inFlight = undefined;
      consider();
    });
  };
  const schedule = (): void => {
    cancelTimer?.();
    cancelTimer = undefined;
    if (closed || !dirty) return;
    const now = options.now();
    const flushAt = options.deadlineMs - policy.flushBeforeDeadlineMs;
    const regular = partialDirty || source.observed().recordCount - lastRecords >= policy.everyRecords ? Math.min(lastAt + policy.everyMs, flushAt) : flushAt;
    const flushHandoverAt = handoverAt === undefined ? undefined : handoverAt - policy.flushBeforeHandoverMs;
    const early = flushHandoverAt !== undefined && partialDirty && handoverWrites < HANDOVER_WRITES && now < flushHandoverAt;
    const nextAt = early ? Math.min(regular, flushHandoverAt) : regular;
    if (nextAt <= now && now >= flushAt) return;
    cancelTimer = options.setTimer(() => consider(options.now() >= flushAt), Math.max(0, nextAt - now));
  };
  const consider = (final = false): void => {
    if (inFlight !== undefined) return;
    if (due(final)) write();
    else schedule();
  };

  return {
    covered: (scope) => {
      pending.push(algebra.normalise(scope));
      dirty = true;
      // A pending timer considers a write itself; between timers, once per `everyRecords` reports
      // is enough to see the record threshold crossed (reading the observation costs the records).
      reportsSinceConsidered += 1;
      if (cancelTimer === undefined || reportsSinceConsidered >= policy.everyRecords) {
        reportsSinceConsidered = 0;
        consider();
      }
    },
    partial: (findings) => {
      partial = { covered: algebra.toScopes(settled()), observed: source.observed(), findings };
      partialDirty = true;
      dirty = true;
      consider();
    },
    coveredScopes: () => algebra.toScopes(settled()),
    written: () => writes,
    holdModelCall: (expectedMs) => {
      if (handoverAt === undefined || closed) return Promise.resolve();
      const now = options.now();
      const until = Math.min(handoverAt + policy.handoverHoldMs, options.deadlineMs);
      const fits = now + expectedMs < handoverAt;
      if (now < handoverAt - policy.handoverWindowMs || now >= until || fits) return Promise.resolve();
      // Its tools answered the whole assignment: it is finishing, and the pieces would have nothing of their own to read.
      if (algebra.isEmpty(algebra.difference(assigned, settled()))) return Promise.resolve();
      holding = true;
      consider();
      return new Promise<void>((resolve) => {
        options.setTimer(() => {
          holding = false;
          resolve();
        }, until - now);
      });
    },
    close: () => {
      closed = true;
      cancelTimer?.();
    },
  };
};
