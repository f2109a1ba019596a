/**
 * Time points as the run resource writes them, read for drawing. The API has already validated
 * every point (lib/contract/calendar.ts), so this only converts: `YYYY-MM-DD` is 00:00 UTC of
 * that day, an instant is read with its own offset.
 */

/** One day in milliseconds. */
export const DAY_MS = 86_400_000;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True for the date form `YYYY-MM-DD` (whole days), false for an instant. */
export const isDateForm = (point: string): boolean => DATE.test(point);

/**
 * Epoch milliseconds of a time point, or `NaN` for text that is no time point.
 *
 * @example
 * timeMs('2025-01-02') - timeMs('2025-01-01') // 86_400_000
 */
export const timeMs = (point: string): number => {
  const date = DATE.exec(point);
  if (date) {
    const at = new Date(Date.UTC(2000, Number(date[2]) - 1, Number(date[3])));
    at.setUTCFullYear(Number(date[1]), Number(date[2]) - 1, Number(date[3]));
    return at.getTime();
  }
  return Date.parse(point);
};

/**
 * The exclusive end of an inclusive observed maximum: the day after a date, or the instant
 * itself plus one millisecond (observations name the last record they read).
 *
 * @example
 * inclusiveEndMs('2025-06-27') === timeMs('2025-06-28') // true
 */
export const inclusiveEndMs = (point: string): number => timeMs(point) + (isDateForm(point) ? DAY_MS : 1);

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

/** `Jan` … `Dec` for a month index 0–11 (UTC). */
export const monthName = (month: number): string => MONTHS[((month % 12) + 12) % 12] ?? '';

/**
 * How a day is written in labels: `28 Jun 2025` (UTC).
 *
 * @example
 * dayLabel(timeMs('2025-06-28')) // '28 Jun 2025'
 */
export const dayLabel = (ms: number): string => {
  const d = new Date(ms);
  return `${d.getUTCDate()} ${monthName(d.getUTCMonth())} ${d.getUTCFullYear()}`;
};
