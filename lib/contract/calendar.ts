/**
 * Strict ISO-8601 parsing for the two time forms the contract accepts.
 *
 * `Date.parse` is not used for validation because it rolls impossible dates forward
 * (`2025-02-30` becomes 2 March in some engines), and a scope that silently moves is
 * exactly the failure tessera exists to prevent.
 */

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(Z|[+-]\d{2}:\d{2})$/;

/** A parsed point in time: epoch milliseconds plus how it was written. */
export interface ParsedTimePoint {
  /** Milliseconds since the Unix epoch (UTC). Dates are taken at 00:00 UTC. */
  readonly ms: number;
  /** `date` for `YYYY-MM-DD`; `instant` for a date-time with an explicit offset. */
  readonly form: 'date' | 'instant';
  /** Offset of the written value in minutes east of UTC; `0` for dates and `Z`. */
  readonly offsetMinutes: number;
}

/** Time points are written with four-digit years: `0000` to `9999`. */
export const MAX_YEAR = 9999;

/**
 * The calendar year of an instant as written in a fixed offset (minutes east of UTC).
 *
 * @example
 * yearInOffset(Date.UTC(9999, 11, 31, 23), 120) // 10000: 01:00 on 1 January 10000 at +02:00
 */
export const yearInOffset = (ms: number, offsetMinutes: number): number => new Date(ms + offsetMinutes * 60_000).getUTCFullYear();

/** True when the year is a Gregorian leap year. */
export const isLeapYear = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

/** Number of days in a month (1-based) of a given year. */
export const daysInMonth = (year: number, month: number): number => {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
};

/** `Date.UTC` maps years 0-99 to 1900-1999; setting the full year afterwards keeps them as written. */
const utc = (year: number, month: number, day: number, hours = 0, minutes = 0, seconds = 0, millis = 0): number => {
  const date = new Date(Date.UTC(2000, month - 1, day, hours, minutes, seconds, millis));
  date.setUTCFullYear(year, month - 1, day);
  return date.getTime();
};

const validDate = (year: number, month: number, day: number): boolean => month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);

/**
 * Parses `YYYY-MM-DD` or `YYYY-MM-DDThh:mm[:ss[.sss]](Z|±hh:mm)`.
 * Returns `undefined` for anything else, including impossible calendar dates.
 *
 * @example
 * parseTimePoint('2024-02-29')?.form // 'date'
 * parseTimePoint('2025-02-29')       // undefined: 2025 is not a leap year
 */
export const parseTimePoint = (value: string): ParsedTimePoint | undefined => {
  const date = DATE.exec(value);
  if (date) {
    const [y, m, d] = [Number(date[1]), Number(date[2]), Number(date[3])];
    if (!validDate(y, m, d)) return undefined;
    return { ms: utc(y, m, d), form: 'date', offsetMinutes: 0 };
  }
  const instant = INSTANT.exec(value);
  if (!instant) return undefined;
  const [y, m, d, hh, mm] = [1, 2, 3, 4, 5].map((i) => Number(instant[i])) as [number, number, number, number, number];
  const ss = instant[6] === undefined ? 0 : Number(instant[6]);
  const millis = instant[7] === undefined ? 0 : Number(instant[7].padEnd(3, '0'));
  if (!validDate(y, m, d) || hh > 23 || mm > 59 || ss > 59) return undefined;
  const zone = instant[8] as string;
  let offsetMinutes = 0;
  if (zone !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const oh = Number(zone.slice(1, 3));
    const om = Number(zone.slice(4, 6));
    if (oh > 14 || om > 59) return undefined;
    offsetMinutes = sign * (oh * 60 + om);
  }
  const ms = utc(y, m, d, hh, mm, ss, millis) - offsetMinutes * 60_000;
  return { ms, form: 'instant', offsetMinutes };
};
