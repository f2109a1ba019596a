import {
  parseTimePoint,
  type Dimension,
  type FileScope,
  type LineRange,
  type Observed,
  type ObservedIds,
  type ObservedPaths,
  type ObservedTime,
  type Refusal,
} from '../contract';

/**
 * Observation recorders: the only writers of an outcome's `observed` block. Scoped tools feed
 * them with what a source actually returned; worker code never sees them, so a worker that
 * echoes its brief cannot change what the outcome says it covered.
 */

/**
 * Records the dates of time-series records: min, max and a count of distinct records.
 *
 * @example
 * binding.recorder.record(row.id, point.ms, '2025-06-27');
 */
export interface TimeRecorder {
  readonly dimension: 'time';
  /** `ms` is the record's instant; `written` its date as the observed block should show it. */
  record(recordId: string, ms: number, written: string): void;
  observed(): ObservedTime;
}

/**
 * Records the ids whose records were read, with how many records each yielded.
 *
 * @example
 * binding.recorder.record('web:pricing', rows.length);
 */
export interface IdsRecorder {
  readonly dimension: 'ids';
  record(id: string, records: number): void;
  observed(): ObservedIds;
}

/**
 * Records files and the inclusive line ranges read from them.
 *
 * @example
 * binding.recorder.recordLines('src/a.ts', [1, 120]);
 */
export interface PathsRecorder {
  readonly dimension: 'paths';
  /** Lines `[first, last]` of `path` were read. */
  recordLines(path: string, range: LineRange): void;
  /** All of `path` (`lineCount` lines) was read. */
  recordWholeFile(path: string, lineCount: number): void;
  observed(): ObservedPaths;
}

/**
 * @example
 * const recorder: RecorderByDimension['time'] = timeRecorder();
 */
export interface RecorderByDimension {
  time: TimeRecorder;
  ids: IdsRecorder;
  paths: PathsRecorder;
}

/**
 * A min/max/count recorder for time-series records. A record seen twice (two overlapping tool
 * calls) counts once, so calling a tool again cannot inflate `recordCount`.
 *
 * @example
 * const r = timeRecorder();
 * r.record('t1', Date.UTC(2025, 3, 1), '2025-04-01');
 * r.record('t2', Date.UTC(2025, 5, 27), '2025-06-27');
 * r.observed() // { minDate: '2025-04-01', maxDate: '2025-06-27', recordCount: 2 }
 */
export const timeRecorder = (): TimeRecorder => {
  const seen = new Set<string>();
  let min: { ms: number; written: string } | undefined;
  let max: { ms: number; written: string } | undefined;
  return {
    dimension: 'time',
    record(recordId, ms, written) {
      seen.add(recordId);
      if (min === undefined || ms < min.ms) min = { ms, written };
      if (max === undefined || ms > max.ms) max = { ms, written };
    },
    observed: () => ({ minDate: min?.written ?? null, maxDate: max?.written ?? null, recordCount: seen.size }),
  };
};

/**
 * An ids recorder. An id is observed only when it yielded at least one record: an id whose
 * source answered with nothing was reached (see `sourcesReached`) but not covered.
 *
 * @example
 * const r = idsRecorder();
 * r.record('web:pricing', 3);
 * r.record('web:pricing', 3); // read twice: still 3 records
 * r.observed() // { ids: ['web:pricing'], recordCount: 3 }
 */
export const idsRecorder = (): IdsRecorder => {
  const counts = new Map<string, number>();
  return {
    dimension: 'ids',
    record(id, records) {
      if (records > 0) counts.set(id, Math.max(records, counts.get(id) ?? 0));
    },
    observed: () => {
      const ids = [...counts.keys()].sort();
      return { ids, recordCount: ids.reduce((sum, id) => sum + (counts.get(id) ?? 0), 0) };
    },
  };
};

/**
 * A paths recorder. Line ranges are inclusive and 1-based, merged per file when they touch.
 * A file read whole is reported without `lines` (the contract's "whole file"), and
 * `recordCount` is the number of distinct lines read.
 *
 * @example
 * const r = pathsRecorder();
 * r.recordLines('src/a.ts', [1, 40]);
 * r.recordLines('src/a.ts', [41, 80]);
 * r.observed() // { files: [{ path: 'src/a.ts', lines: [[1, 80]] }], recordCount: 80 }
 */
export const pathsRecorder = (): PathsRecorder => {
  const files = new Map<string, { whole?: number; ranges: LineRange[] }>();
  const entry = (path: string) => {
    const found = files.get(path) ?? { ranges: [] };
    files.set(path, found);
    return found;
  };
  return {
    dimension: 'paths',
    recordLines(path, range) {
      entry(path).ranges.push(range);
    },
    recordWholeFile(path, lineCount) {
      entry(path).whole = lineCount;
    },
    observed: () => {
      let recordCount = 0;
      const observed: FileScope[] = [...files.keys()].sort().map((path) => {
        const { whole, ranges } = files.get(path) ?? { ranges: [] };
        if (whole !== undefined) {
          recordCount += whole;
          return { path };
        }
        const lines = mergeRanges(ranges);
        recordCount += lines.reduce((sum, [first, last]) => sum + last - first + 1, 0);
        return { path, lines };
      });
      return { files: observed, recordCount };
    },
  };
};

/**
 * Sorts inclusive ranges and merges those that overlap or touch.
 *
 * @example
 * mergeRanges([[41, 80], [1, 40], [100, 110]]) // [[1, 80], [100, 110]]
 */
export const mergeRanges = (ranges: readonly LineRange[]): LineRange[] => {
  const merged: LineRange[] = [];
  for (const [first, last] of [...ranges].sort((a, b) => a[0] - b[0])) {
    const previous = merged.at(-1);
    if (previous && first <= previous[1] + 1) previous[1] = Math.max(previous[1], last);
    else merged.push([first, last]);
  }
  return merged;
};

/**
 * Creates the recorder of a dimension.
 *
 * @example
 * recorderFor('ids').observed() // { ids: [], recordCount: 0 }
 */
export const recorderFor = <D extends Dimension>(dimension: D): RecorderByDimension[D] => {
  const recorders: { [K in Dimension]: () => RecorderByDimension[K] } = {
    time: timeRecorder,
    ids: idsRecorder,
    paths: pathsRecorder,
  };
  return recorders[dimension]();
};

/**
 * Everything the tool layer learns while a worker runs: the observation, the sources that
 * answered, and the requests it refused.
 *
 * @example
 * const evidence = openEvidence('time');
 * evidence.refuse({ tool: 'statements', requested: '2025-03-01..2025-07-01', reason: 'outside the assignment' });
 */
export interface Evidence<D extends Dimension = Dimension> {
  readonly recorder: RecorderByDimension[D];
  /** A source answered (even with no records). */
  reach(source: string): void;
  /** The worker asked a source for assigned data (a request its tool accepted). */
  ask(): void;
  /** How many requests for assigned data the worker made. */
  asked(): number;
  refuse(refusal: Refusal): void;
  sources(): string[];
  refusals(): Refusal[];
}

/**
 * Opens the evidence of one subtask run.
 *
 * @example
 * const evidence = openEvidence('ids');
 * evidence.reach('web:pricing');
 * evidence.sources() // ['web:pricing']
 */
export const openEvidence = <D extends Dimension>(dimension: D): Evidence<D> => {
  const reached = new Set<string>();
  const refused: Refusal[] = [];
  let asked = 0;
  return {
    recorder: recorderFor(dimension),
    reach: (source) => void reached.add(source),
    ask: () => void (asked += 1),
    asked: () => asked,
    refuse: (refusal) => void refused.push(refusal),
    sources: () => [...reached],
    refusals: () => [...refused],
  };
};

/**
 * The observation of a run that resumed an earlier generation's checkpoint: what that
 * generation's partial findings rest on, plus what this run's tools returned. The kind skipped
 * the resumed region, so records are added; ids and line ranges are united.
 *
 * @example
 * mergeObserved({ minDate: '2025-04-01', maxDate: '2025-05-31', recordCount: 12 }, { minDate: '2025-06-01', maxDate: '2025-06-27', recordCount: 6 })
 * // { minDate: '2025-04-01', maxDate: '2025-06-27', recordCount: 18 }
 */
export const mergeObserved = (earlier: Observed, later: Observed): Observed => {
  if ('minDate' in earlier && 'minDate' in later) {
    const pick = (a: string | null, b: string | null, first: boolean): string | null => {
      if (a === null || b === null) return a ?? b;
      return (parseTimePoint(a)?.ms ?? 0) <= (parseTimePoint(b)?.ms ?? 0) === first ? a : b;
    };
    return {
      minDate: pick(earlier.minDate, later.minDate, true),
      maxDate: pick(earlier.maxDate, later.maxDate, false),
      recordCount: earlier.recordCount + later.recordCount,
    };
  }
  if ('ids' in earlier && 'ids' in later)
    return { ids: [...new Set([...earlier.ids, ...later.ids])].sort(), recordCount: earlier.recordCount + later.recordCount };
  if ('files' in earlier && 'files' in later) {
    const merged = pathsRecorder();
    for (const file of [...earlier.files, ...later.files]) {
      if (file.lines === undefined) merged.recordWholeFile(file.path, 0);
      else for (const range of file.lines) merged.recordLines(file.path, range);
    }
    return { files: merged.observed().files, recordCount: earlier.recordCount + later.recordCount };
  }
  return later;
};
