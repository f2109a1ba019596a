import type { TimeRange } from '../../lib/contract';
import { DAY_MS, formatTimePoint, readTimePoint, DATE_FORMAT } from '../../lib/domain';
import type { Random } from './random';

/**
 * The latency model of Scout's CRM worker. One account per run: its note count is lognormal
 * (a heavy tail: most accounts have a few dozen notes, a few have thousands), and one attempt at
 * it takes `(baseSeconds + secondsPerNote × notes) × e^(noiseSigma × Z)` with Z standard normal
 * and drawn afresh for every attempt. The size term is the same for a retry or a replica of the
 * same account; only the noise is new, which is why a second copy barely helps a big account.
 * A piece of a subdivided account takes the same formula on its own share of the notes.
 */
export interface ScoutModel {
  /** ln of the median note count per account. */
  readonly notesMu: number;
  /** Spread of ln(notes): the heavy tail. */
  readonly notesSigma: number;
  /** Seconds an attempt takes before its first note (request, first model call). */
  readonly baseSeconds: number;
  /** Seconds per note read (search page, model call share). */
  readonly secondsPerNote: number;
  /** Spread of the per-attempt multiplicative noise, e^(noiseSigma × Z). */
  readonly noiseSigma: number;
  /** One model call per this many notes read; an attempt's calls are ⌈notes read / notesPerCall⌉. */
  readonly notesPerCall: number;
  /** Notes pile up towards the present: a note's place in its account's history is U^(1/recency). */
  readonly recency: number;
  /** The run's own time outside the CRM subtask: dispatch, reconcile, synthesis. */
  readonly overheadSeconds: number;
  /** From a subtask's deadline to its retry starting: reconcile round 1, plan and dispatch round 2. */
  readonly roundGapSeconds: number;
  /** From a hedge's threshold to its copies starting: the Map wakes, enqueues, a worker picks it up. */
  readonly hedgeDispatchSeconds: number;
}

/**
 * Scout's figures, which the model is calibrated to (`docs/scout-replay.md`): 143 of 2,340 runs
 * over a 25-s deadline, 1.4% still missing after one serial retry with a 40-s deadline, and p95
 * run latency of about 26 s without the retry and 51 s with it.
 */
export const SCOUT = {
  runs: 2_340,
  deadlineSeconds: 25,
  missedRuns: 143,
  retryDeadlineSeconds: 40,
  missingAfterRetry: 0.014,
  p95NoRetrySeconds: 26,
  p95RetrySeconds: 51,
} as const;

/**
 * The calibrated model. baseSeconds and secondsPerNote are fixed by reasoning (2 s to start, and
 * a median attempt at 400 notes lands at 25 s: Scout's tail "ran far longer for accounts with
 * more than about 400 notes"); notesMu, notesSigma and noiseSigma come from the search in
 * `calibrate.ts` against the three run-level figures; the rest are stated assumptions.
 */
export const SCOUT_MODEL: ScoutModel = {
  notesMu: 4.65,
  notesSigma: 0.85,
  baseSeconds: 2,
  secondsPerNote: 0.0575,
  noiseSigma: 0.15,
  notesPerCall: 20,
  recency: 2,
  overheadSeconds: 1,
  roundGapSeconds: 1,
  hedgeDispatchSeconds: 1,
};

/** One account: its notes and the time range they lie in (dates, ending 2026-01-01). */
export interface Account {
  readonly notes: number;
  readonly scope: TimeRange;
  /** Every note's instant (epoch ms), ascending, inside `scope`; drawn on first use. */
  noteTimes(): Float64Array;
}

const HISTORY_END = '2026-01-01';

/**
 * Draws an account: a lognormal note count (at least 1) and a history of 1 to 7 years ending
 * 2026-01-01 from `random`; the notes' instants, skewed towards the present (`recency`), from
 * `timesRandom` when first asked for (only a subdivide needs them).
 */
export const sampleAccount = (model: ScoutModel, random: Random, timesRandom: Random): Account => {
  const notes = Math.max(1, Math.round(Math.exp(model.notesMu + model.notesSigma * random.normal())));
  const end = (readTimePoint(HISTORY_END) as { ms: number }).ms;
  const days = 365 + Math.floor(random.uniform() * 6 * 365);
  const start = end - days * DAY_MS;
  let times: Float64Array | undefined;
  const noteTimes = (): Float64Array => {
    if (times) return times;
    times = new Float64Array(notes);
    for (let i = 0; i < notes; i += 1) times[i] = start + Math.floor(timesRandom.uniform() ** (1 / model.recency) * (end - start));
    return times.sort();
  };
  return { notes, scope: { from: formatTimePoint(start, DATE_FORMAT), toExclusive: HISTORY_END }, noteTimes };
};

/** Seconds one attempt at `notes` notes takes; `random` is the attempt's own stream. */
export const attemptSeconds = (model: ScoutModel, notes: number, random: Random): number =>
  (model.baseSeconds + model.secondsPerNote * notes) * Math.exp(model.noiseSigma * random.normal());

/**
 * Model calls an attempt has started after running `ranSeconds` of its `seconds`: it reads its
 * notes at an even pace, one call per `notesPerCall` notes, and a call in flight when it stops
 * is charged (a loser is refused at its next ledger write, not mid-call). Nothing if it never ran.
 *
 * @example
 * callsSpent({ ...SCOUT_MODEL, notesPerCall: 20 }, 100, 50, 10) // 20 notes read → 1 call
 */
export const callsSpent = (model: ScoutModel, notes: number, seconds: number, ranSeconds: number): number => {
  if (ranSeconds <= 0) return 0;
  const read = notes * Math.min(1, ranSeconds / seconds);
  return Math.max(1, Math.ceil(read / model.notesPerCall - 1e-9));
};

/** Notes of `account` in `[fromMs, toMs)` (binary search on the sorted instants). */
export const notesBetween = (account: Account, fromMs: number, toMs: number): number =>
  lowerBound(account.noteTimes(), toMs) - lowerBound(account.noteTimes(), fromMs);

const lowerBound = (values: Float64Array, target: number): number => {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((values[mid] as number) < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};
