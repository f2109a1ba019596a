import { SplitError } from './errors';
import { singleInterval, timeSet, type TimeSet } from './time';
import { civilFromDays, DAY_MS, daysFromCivil, formatTimePoint, readTimePoint } from './time-point';

/** Calendar units a time universe can be split by. */
export type CalendarUnit = 'day' | 'week' | 'month' | 'quarter' | 'year';

/** Day number (local to the offset) on which the unit after the one holding `day` starts. */
const nextUnitDay = (day: number, unit: CalendarUnit): number => {
  if (unit === 'day') return day + 1;
  // 1970-01-01 was a Thursday; ISO weeks start on Monday.
  if (unit === 'week') return day - ((((day + 3) % 7) + 7) % 7) + 7;
  const { year, month } = civilFromDays(day);
  if (unit === 'year') return daysFromCivil(year + 1, 1, 1);
  const step = unit === 'quarter' ? 3 : 1;
  const next = Math.floor((month - 1) / step) * step + step; // 0-based month index of the next unit
  return daysFromCivil(year + Math.floor(next / 12), (next % 12) + 1, 1);
};

const piecesBetween = (set: TimeSet, start: number, cuts: readonly number[], end: number): TimeSet[] => {
  const points = [start, ...cuts, end];
  return points.slice(1).map((point, i) => timeSet(set.format, points[i] as number, point));
};

/**
 * Splits a time range at calendar boundaries: days, ISO weeks (Monday), months, quarters or
 * years. Leap years and month ends come from the calendar, not from fixed lengths. For
 * instants, boundaries are midnights in the range's own fixed offset, so a `+02:00` range is cut
 * at `2025-02-01T00:00:00+02:00`. The first and last pieces may be partial units.
 * Throws `SplitError` (`plan_too_large`) beyond `limit` pieces without building them all.
 *
 * @example
 * splitByCalendar(timeAlgebra.normalise({ from: '2025-01-01', toExclusive: '2026-01-01' }), 'quarter')
 * // four pieces: 2025-01-01..04-01, 04-01..07-01, 07-01..10-01, 10-01..2026-01-01
 */
export const splitByCalendar = (set: TimeSet, unit: CalendarUnit, limit = Number.POSITIVE_INFINITY): TimeSet[] => {
  const [start, end] = singleInterval(set, 'by');
  const offsetMs = set.format.offsetMinutes * 60_000;
  const cuts: number[] = [];
  let day = Math.floor((start + offsetMs) / DAY_MS);
  for (;;) {
    day = nextUnitDay(day, unit);
    const cut = day * DAY_MS - offsetMs;
    if (cut >= end) break;
    if (cuts.length + 1 >= limit) {
      throw new SplitError('plan_too_large', 'by', `splitting by ${unit} makes more than ${limit} subtasks`);
    }
    cuts.push(cut);
  }
  return piecesBetween(set, start, cuts, end);
};

/**
 * Every problem with explicit interior cut points: each must be a valid point in the range's
 * form, strictly inside the range, and after the previous one. `field` is `boundaries.<index>`.
 *
 * @example
 * boundaryProblems(year2025, ['2025-07-01', '2025-04-01']) // [SplitError boundaries.1: must be after 2025-07-01]
 */
export const boundaryProblems = (set: TimeSet, boundaries: readonly string[]): SplitError[] => {
  const [start, end] = singleInterval(set, 'boundaries');
  const errors: SplitError[] = [];
  let previous = start;
  boundaries.forEach((value, index) => {
    const field = `boundaries.${index}`;
    const point = readTimePoint(value);
    if (!point || point.form !== set.format.form) {
      errors.push(
        new SplitError(
          'dimension_mismatch',
          field,
          `must be ${set.format.form === 'date' ? 'an ISO date' : 'an ISO instant'} like the universe (got ${value})`,
        ),
      );
      return;
    }
    if (point.ms <= start || point.ms >= end) {
      const range = `${formatTimePoint(start, set.format)}..${formatTimePoint(end, set.format)}`;
      errors.push(new SplitError('scope_outside_universe', field, `must lie strictly inside the universe ${range} (got ${value})`));
    } else if (point.ms <= previous) {
      errors.push(new SplitError('invalid_request', field, `must be after the previous boundary ${formatTimePoint(previous, set.format)} (got ${value})`));
    }
    previous = Math.max(previous, point.ms);
  });
  return errors;
};

/**
 * Splits a time range at explicit interior boundaries; throws the first `boundaryProblems` entry.
 *
 * @example
 * splitAtBoundaries(year2025, ['2025-04-01', '2025-07-01']).length // 3
 */
export const splitAtBoundaries = (set: TimeSet, boundaries: readonly string[]): TimeSet[] => {
  const [first] = boundaryProblems(set, boundaries);
  if (first) throw first;
  const [start, end] = singleInterval(set, 'boundaries');
  return piecesBetween(
    set,
    start,
    boundaries.map((value) => readTimePoint(value)?.ms as number),
    end,
  );
};
