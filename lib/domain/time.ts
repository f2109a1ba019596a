import type { Scope, TimeRange } from '../contract';
import { DimensionMismatchError, ScopeError, SplitError } from './errors';
import { EMPTY_SET, intersectSets, pairsOf, setsEqual, setsOverlap, subtractSets, unionSets, type IntervalSet } from './intervals';
import { dimensionOf, evenCuts, type DescribeStyle, type ScopeAlgebra } from './scope';
import { DAY_MS, formatOf, formatTimePoint, readTimePoint, type TimeFormat, type TimePointValue } from './time-point';

/**
 * A normalised time region: half-open epoch-ms intervals plus the format results are written
 * in (dates stay dates; instants keep the offset of the value they came from).
 */
export interface TimeSet {
  readonly format: TimeFormat;
  readonly bounds: IntervalSet;
}

const POINT_REASON = 'must be an ISO date (YYYY-MM-DD) or an ISO instant with an offset, on a real calendar day';

/**
 * Reads one time point, throwing a `ScopeError` that names `field`.
 *
 * @example
 * readPoint('2025-02-29', 'from') // throws ScopeError: from must be an ISO date … (got "2025-02-29")
 */
export const readPoint = (value: string, field: string): TimePointValue => {
  const point = readTimePoint(value);
  if (!point) throw new ScopeError(field, value, POINT_REASON);
  return point;
};

/**
 * Reads `[from, toExclusive)`: both ends valid, in the same form, and `from` before `toExclusive`.
 *
 * @example
 * readTimeRange({ from: '2025-04-01', toExclusive: '2025-07-01' }).bounds // [Date.UTC(2025,3,1), Date.UTC(2025,6,1)]
 */
export const readTimeRange = (range: TimeRange): TimeSet => {
  const from = readPoint(range.from, 'from');
  const to = readPoint(range.toExclusive, 'toExclusive');
  if (from.form !== to.form) {
    throw new ScopeError('toExclusive', range.toExclusive, `must use the same form as from (${range.from})`);
  }
  if (from.ms >= to.ms) throw new ScopeError('toExclusive', range.toExclusive, `must be after from (${range.from})`);
  return { format: formatOf(from), bounds: [from.ms, to.ms] };
};

/** Builds a set of one interval in a given format. @example timeSet(DATE_FORMAT, start, end).bounds // [start, end] */
export const timeSet = (format: TimeFormat, start: number, end: number): TimeSet => ({
  format,
  bounds: start < end ? [start, end] : EMPTY_SET,
});

const asTimeScope = (scope: Scope): TimeRange => {
  if (!('from' in scope)) throw new DimensionMismatchError('time', dimensionOf(scope));
  return scope;
};

/** `2025-06-28..2025-07-01` (exact) or `2025-06-28 to 2025-06-30` (prose, inclusive dates). */
const describeInterval = (format: TimeFormat, start: number, end: number, style: DescribeStyle): string => {
  const from = formatTimePoint(start, format);
  if (style === 'exact') return `${from}..${formatTimePoint(end, format)}`;
  if (format.form === 'instant') return `${from} until ${formatTimePoint(end, format)}`;
  const last = formatTimePoint(end - DAY_MS, format);
  return last === from ? from : `${from} to ${last}`;
};

const splitParts = (set: TimeSet, parts: number): TimeSet[] => {
  const [start, end] = singleInterval(set, 'parts');
  const unit = set.format.form === 'date' ? DAY_MS : 1;
  const units = (end - start) / unit;
  if (parts > units) {
    const what = unit === DAY_MS ? `${units} day${units === 1 ? '' : 's'}` : `${units} ms`;
    throw new SplitError('plan_too_large', 'parts', `cannot cut ${what} into ${parts} whole parts`);
  }
  const cuts = evenCuts(units, parts).map((cut) => start + cut * unit);
  return cuts.slice(1).map((cut, i) => timeSet(set.format, cuts[i] as number, cut));
};

/**
 * The only interval of a universe-like set; splitting a set with holes has no single meaning.
 *
 * @example
 * singleInterval(timeAlgebra.normalise({ from: '2025-01-01', toExclusive: '2026-01-01' }), 'parts')
 */
export const singleInterval = (set: TimeSet, field: string): [number, number] => {
  if (set.bounds.length !== 2) {
    throw new SplitError('invalid_request', field, 'only a single contiguous time range can be split');
  }
  return [set.bounds[0] as number, set.bounds[1] as number];
};

const combineWith =
  (op: (a: IntervalSet, b: IntervalSet) => IntervalSet) =>
  (a: TimeSet, b: TimeSet): TimeSet => ({
    format: a.format,
    bounds: op(a.bounds, b.bounds),
  });

/**
 * The time dimension: half-open `[from, toExclusive)` ranges of ISO dates or instants.
 *
 * @example
 * timeAlgebra.describe(timeAlgebra.normalise({ from: '2025-01-01', toExclusive: '2026-01-01' }), 'prose')
 * // '2025-01-01 to 2025-12-31'
 */
export const timeAlgebra: ScopeAlgebra<TimeSet> = {
  dimension: 'time',
  normalise: (scope) => readTimeRange(asTimeScope(scope)),
  toScopes: (set) => pairsOf(set.bounds).map(([s, e]) => ({ from: formatTimePoint(s, set.format), toExclusive: formatTimePoint(e, set.format) })),
  split: splitParts,
  union: combineWith(unionSets),
  intersect: combineWith(intersectSets),
  difference: combineWith(subtractSets),
  overlaps: (a, b) => setsOverlap(a.bounds, b.bounds),
  isEmpty: (set) => set.bounds.length === 0,
  equals: (a, b) => setsEqual(a.bounds, b.bounds),
  describe: (set, style = 'prose') =>
    set.bounds.length === 0
      ? 'nothing'
      : pairsOf(set.bounds)
          .map(([s, e]) => describeInterval(set.format, s, e, style))
          .join(', '),
};
