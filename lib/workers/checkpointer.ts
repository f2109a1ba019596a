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
  /** Writes per subtask, across its generations. @default MAX_CHECKPOINTS (32) */
  readonly maxWrites: number;
}

/** @example DEFAULT_CHECKPOINT_POLICY.everyMs // 5000 */
export const DEFAULT_CHECKPOINT_POLICY: CheckpointPolicy = Object.freeze({
  everyRecords: 100,
  everyMs: 5_000,
  flushBeforeDeadlineMs: 1_000,
  maxWrites: MAX_CHECKPOINTS,
});

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
    if (final) return true;
    const records = source.observed().recordCount - lastRecords;
    return (partialDirty || records >= policy.everyRecords) && options.now() - lastAt >= policy.everyMs;
  };
  const write = (): void => {
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
    const nextAt = partialDirty || source.observed().recordCount - lastRecords >= policy.everyRecords ? Math.min(lastAt + policy.everyMs, flushAt) : flushAt;
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
    close: () => {
      closed = true;
      cancelTimer?.();
    },
  };
};
