/**
 * The calibration of the Scout model: its no-retry and serial-retry figures beside Scout's, and
 * the small grid search that chose notesMu, notesSigma and noiseSigma. The search replays the
 * real policies (`replay`) on 10,000 accounts per point with one seed (common random numbers, so
 * points differ only by their parameters) and minimises the squared misses in units of the
 * calibration tolerance (0.5 points, 3 s).
 *
 * `npx tsx bench/scout/calibrate.ts` reruns the search and prints the best points.
 */
import { pathToFileURL } from 'node:url';
import { SCOUT, SCOUT_MODEL, type ScoutModel } from './model';
import { accountsFor, replay, summarise } from './replay';

/** The figures the model is calibrated to, from one replay of `runs` accounts. */
export interface CalibrationFigures {
  readonly runs: number;
  /** Runs over the 25-s deadline with no retry. */
  readonly missedRuns: number;
  readonly missedShare: number;
  /** Share still missing after one serial retry with a 40-s deadline. */
  readonly missingAfterRetry: number;
  readonly p95NoRetry: number;
  readonly p95Retry: number;
}

export const NO_RETRY = { kind: 'none', deadlineSeconds: SCOUT.deadlineSeconds } as const;
export const SERIAL_RETRY = { kind: 'retry', deadlineSeconds: SCOUT.deadlineSeconds, retryDeadlineSeconds: SCOUT.retryDeadlineSeconds } as const;

export const calibrationFigures = (model: ScoutModel, seed: number, runs: number): CalibrationFigures => {
  const accounts = accountsFor(model, seed, runs);
  const none = summarise(replay(model, NO_RETRY, seed, accounts));
  const retry = summarise(replay(model, SERIAL_RETRY, seed, accounts));
  return { runs, missedRuns: none.missing, missedShare: none.missingShare, missingAfterRetry: retry.missingShare, p95NoRetry: none.p95, p95Retry: retry.p95 };
};

/** The calibration tolerance: shares within 0.5 points, p95s within 3 s. */
export const TOLERANCE = { share: 0.005, seconds: 3 } as const;

/** Each figure's miss in units of the tolerance; all within 1 means calibrated. */
export const calibrationMisses = (figures: CalibrationFigures) => ({
  missedShare: (figures.missedShare - SCOUT.missedRuns / SCOUT.runs) / TOLERANCE.share,
  missingAfterRetry: (figures.missingAfterRetry - SCOUT.missingAfterRetry) / TOLERANCE.share,
  p95NoRetry: (figures.p95NoRetry - SCOUT.p95NoRetrySeconds) / TOLERANCE.seconds,
  p95Retry: (figures.p95Retry - SCOUT.p95RetrySeconds) / TOLERANCE.seconds,
});

const range = (from: number, to: number, step: number): number[] =>
  Array.from({ length: Math.round((to - from) / step) + 1 }, (_, i) => Number((from + i * step).toFixed(4)));

/**
 * The grid search around the hand-reasoned start (a median of about 120 notes, a tail to a few
 * thousand, noise well under the size effect); returns the points, best first.
 */
export const searchCalibration = (seed: number, runs: number) => {
  const points = [];
  for (const notesMu of range(4.6, 4.9, 0.05))
    for (const notesSigma of range(0.7, 0.9, 0.05)) {
      const accounts = accountsFor({ ...SCOUT_MODEL, notesMu, notesSigma }, seed, runs);
      for (const noiseSigma of range(0.1, 0.25, 0.05)) {
        const model = { ...SCOUT_MODEL, notesMu, notesSigma, noiseSigma };
        const none = summarise(replay(model, NO_RETRY, seed, accounts));
        const retry = summarise(replay(model, SERIAL_RETRY, seed, accounts));
        const figures = {
          runs,
          missedRuns: none.missing,
          missedShare: none.missingShare,
          missingAfterRetry: retry.missingShare,
          p95NoRetry: none.p95,
          p95Retry: retry.p95,
        };
        const misses = calibrationMisses(figures);
        points.push({ notesMu, notesSigma, noiseSigma, figures, error: Object.values(misses).reduce((sum, m) => sum + m * m, 0) });
      }
    }
  return points.sort((a, b) => a.error - b.error);
};

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const seed = Number(process.env.SCOUT_SEED ?? 15);
  for (const point of searchCalibration(seed, 10_000).slice(0, 10)) console.log(JSON.stringify(point));
}
