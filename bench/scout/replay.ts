import { sampleAccount, type Account, type ScoutModel } from './model';
import { replayRun, type Policy, type RunResult } from './policies';
import { randomFor } from './random';

/**
 * The accounts of a replay: run i's account comes from the streams (seed, i, 0) and (seed, i, 5),
 * so every policy replays the same accounts.
 */
export const accountsFor = (model: ScoutModel, seed: number, runs: number): Account[] =>
  Array.from({ length: runs }, (_, i) => sampleAccount(model, randomFor(seed, i, 0), randomFor(seed, i, 5)));

/** Replays every account under `policy`; run i's attempts draw from the streams (seed, i, key). */
export const replay = (model: ScoutModel, policy: Policy, seed: number, accounts: readonly Account[]): RunResult[] =>
  accounts.map((account, i) => replayRun(model, policy, account, (key) => randomFor(seed, i, key)));

/** Nearest-rank percentile: the smallest value with at least `p` of the values at or below it. */
export const percentile = (values: readonly number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? Number.NaN;
};

/** The figures one policy is judged by. */
export interface Summary {
  readonly runs: number;
  readonly missing: number;
  readonly missingShare: number;
  readonly silentGaps: number;
  readonly p50: number;
  readonly p95: number;
  readonly callsPerRun: number;
  /** Calls per run spent by copies that did not win (losers, and every copy of a missing run). */
  readonly lostCallsPerRun: number;
  readonly hedgedShare: number;
  readonly partlyRead: number;
  /** Runs whose subdivide pieces were checked with `checkTiling`, and how many of them did not tile (must be 0). */
  readonly tilingChecked: number;
  readonly untiled: number;
  /** Checkpoint writes per run (one conditional UpdateItem each), and the most one subtask wrote in any run. */
  readonly checkpointWritesPerRun: number;
  readonly maxCheckpointWrites: number;
  /** Checkpoints the handover window wrote early, in all runs, and the most in one run. */
  readonly handoverWrites: number;
  readonly maxHandoverWrites: number;
  /** Runs whose original handed over to its pieces, and runs whose retry was sent only the unread rest. */
  readonly handovers: number;
  readonly retriedRest: number;
}

export const summarise = (results: readonly RunResult[]): Summary => {
  const missing = results.filter((r) => !r.covered).length;
  const seconds = results.map((r) => r.seconds);
  return {
    runs: results.length,
    missing,
    missingShare: missing / results.length,
    silentGaps: results.filter((r) => r.silentGap).length,
    p50: percentile(seconds, 0.5),
    p95: percentile(seconds, 0.95),
    callsPerRun: results.reduce((sum, r) => sum + r.calls, 0) / results.length,
    lostCallsPerRun: results.reduce((sum, r) => sum + r.lostCalls, 0) / results.length,
    hedgedShare: results.filter((r) => r.hedged).length / results.length,
    partlyRead: results.filter((r) => r.partlyRead).length,
    tilingChecked: results.filter((r) => r.piecesTile !== null).length,
    untiled: results.filter((r) => r.piecesTile === false).length,
    checkpointWritesPerRun: results.reduce((sum, r) => sum + r.checkpointWrites, 0) / results.length,
    maxCheckpointWrites: results.reduce((most, r) => Math.max(most, r.maxCheckpointWrites), 0),
    handoverWrites: results.reduce((sum, r) => sum + r.handoverWrites, 0),
    maxHandoverWrites: results.reduce((most, r) => Math.max(most, r.handoverWrites), 0),
    handovers: results.filter((r) => r.handedOver).length,
    retriedRest: results.filter((r) => r.retriedRest).length,
  };
};
