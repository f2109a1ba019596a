import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Manifest, Outcome, type OutcomeInput } from '../lib/contract';
import { reconcile } from '../lib/domain';

/**
 * Reconcile scaling (issue 2): reconcile of 100,000 time partitions and of 1,000,000 ids, each
 * beside a bare sort of the same input measured in the same process. Target: {@link TARGET_RATIO}.
 */

const TIME_PARTITIONS = 100_000;
const IDS = 1_000_000;
const IDS_PER_SUBTASK = 1_000;
const REPETITIONS = 5;
/** Reconcile may take at most this many times a bare sort of the same input (issue 24). */
const TARGET_RATIO = 1.25;

/** Deterministic shuffle (mulberry32), so every run measures the same input. */
const shuffled = <T>(items: T[], seed = 42): T[] => {
  let state = seed;
  const random = (): number => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  for (let i = items.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
};

const day = (n: number): string => new Date(Date.UTC(1800, 0, 1) + n * 86_400_000).toISOString().slice(0, 10);

const ok = (subtaskId: string, observed: OutcomeInput['observed'], recordCount = 1): OutcomeInput => ({
  subtaskId,
  state: 'ok',
  observed,
  sourcesReached: recordCount > 0 ? 1 : 0,
});

/** Daily partitions over ~274 years in completion order (shuffled); every 1,000th ends a day early. */
const timeInput = (): string =>
  JSON.stringify({
    manifest: {
      universe: { dimension: 'time', from: day(0), toExclusive: day(TIME_PARTITIONS * 2) },
      subtasks: shuffled(
        Array.from({ length: TIME_PARTITIONS }, (_, i) => ({
          id: `P${i}`,
          worker: 'w',
          round: 1,
          assigned: { from: day(2 * i), toExclusive: day(2 * i + 2) },
        })),
      ),
    },
    outcomes: shuffled(
      Array.from({ length: TIME_PARTITIONS }, (_, i) => ok(`P${i}`, { minDate: day(2 * i), maxDate: day(2 * i + (i % 1000 === 0 ? 0 : 1)), recordCount: 3 })),
    ),
  });

/** A backlog of ids chunked 1,000 to a subtask; every subtask observes its ids in its own order, one missing per chunk of 100. */
const idsInput = (): string => {
  const ids = shuffled(Array.from({ length: IDS }, (_, i) => `ticket-${String(i).padStart(7, '0')}`));
  const chunks = Array.from({ length: IDS / IDS_PER_SUBTASK }, (_, c) => ids.slice(c * IDS_PER_SUBTASK, (c + 1) * IDS_PER_SUBTASK));
  return JSON.stringify({
    manifest: { universe: { dimension: 'ids', ids }, subtasks: chunks.map((chunk, c) => ({ id: `C${c}`, worker: 'w', round: 1, assigned: { ids: chunk } })) },
    outcomes: chunks.map((chunk, c) =>
      ok(`C${c}`, {
        ids: shuffled(
          chunk.filter((_, k) => c % 100 !== 0 || k !== 0),
          c + 1,
        ),
        recordCount: chunk.length,
      }),
    ),
  });
};

/** Parses a fresh copy (new string objects, so no run profits from hashes cached by the previous one). */
const fresh = (json: string): Input => {
  const raw: unknown = JSON.parse(json);
  const input = typeof raw === 'object' && raw !== null ? raw : {};
  return { manifest: Manifest.parse(Reflect.get(input, 'manifest')), outcomes: Outcome.array().parse(Reflect.get(input, 'outcomes')) };
};

/**
 * A full garbage collection before each timed run, so neither side pays for the garbage the
 * input preparation left behind. `--expose-gc` set at run time reaches a fresh context only.
 */
setFlagsFromString('--expose-gc');
const gc: unknown = runInNewContext('gc');
const collect = (): void => {
  if (typeof gc === 'function') gc();
};

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** Milliseconds of one call on a freshly prepared input, after a full collection. */
const once = <T>(prepare: () => T, measure: (input: T) => unknown): number => {
  const input = prepare();
  collect();
  const start = performance.now();
  measure(input);
  return performance.now() - start;
};

type Input = { manifest: Manifest; outcomes: Outcome[] };

/**
 * Median of reconcile and of the bare sort, interleaved run by run so that load from other
 * processes on the machine falls on both sides alike.
 */
const compare = (label: string, json: string, bareSort: (input: Input) => unknown): void => {
  const reconcileRuns: number[] = [];
  const sortRuns: number[] = [];
  for (let r = 0; r < REPETITIONS; r += 1) {
    reconcileRuns.push(
      once(
        () => fresh(json),
        ({ manifest, outcomes }) => reconcile(manifest, outcomes),
      ),
    );
    sortRuns.push(once(() => fresh(json), bareSort));
  }
  const [reconcileMs, sortMs] = [median(reconcileRuns), median(sortRuns)];
  const ratio = reconcileMs / sortMs;
  const figures = `reconcile ${reconcileMs.toFixed(0).padStart(6)} ms   bare sort ${sortMs.toFixed(0).padStart(6)} ms`;
  const verdict = `ratio ${ratio.toFixed(2)}x (target <= ${TARGET_RATIO}x: ${ratio <= TARGET_RATIO ? 'met' : 'MISSED'})`;
  console.log(`${label.padEnd(26)} ${figures}   ${verdict}`);
};

const fromOf = (scope: Manifest['subtasks'][number]['assigned']): string => ('from' in scope ? scope.from : '');

/** Prints reconcile time beside a bare sort for both scale targets. */
export async function run(): Promise<void> {
  console.log(`median of ${REPETITIONS} runs each, fresh JSON-parsed input per run (node ${process.version})`);
  compare(`${TIME_PARTITIONS.toLocaleString('en-US')} time partitions`, timeInput(), ({ manifest }) =>
    [...manifest.subtasks].sort((a, b) => (fromOf(a.assigned) < fromOf(b.assigned) ? -1 : fromOf(a.assigned) > fromOf(b.assigned) ? 1 : 0)),
  );
  compare(`${IDS.toLocaleString('en-US')} ids`, idsInput(), ({ manifest }) => [...('ids' in manifest.universe ? manifest.universe.ids : [])].sort());
}
