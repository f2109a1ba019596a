/**
 * Time points for the coverage algebra: a strict parser that agrees with the contract's
 * `parseTimePoint` (it is property-tested against it) but reads character codes instead of
 * running a regular expression, because reconcile parses hundreds of thousands of bounds; and
 * a formatter that writes a point back in the form the caller used.
 */

export const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

/** How a point was written, so results can be written back the same way. */
export interface TimeFormat {
  /** `date` (`2025-04-01`, 00:00 UTC) or `instant` (with an explicit offset). */
  readonly form: 'date' | 'instant';
  /** Minutes east of UTC; 0 for dates. */
  readonly offsetMinutes: number;
  /** The instant was written with `Z` rather than `+00:00`. */
  readonly zulu: boolean;
}

/** A parsed point: epoch milliseconds plus how it was written. */
export interface TimePointValue extends TimeFormat {
  readonly ms: number;
}

export const DATE_FORMAT: TimeFormat = Object.freeze({ form: 'date', offsetMinutes: 0, zulu: false });

/**
 * Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
 * Unlike `Date.UTC` it does not map years 0–99 onto the 1900s.
 *
 * @example
 * daysFromCivil(2025, 1, 1) // 20089
 */
export const daysFromCivil = (year: number, month: number, day: number): number => {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
};

/**
 * The calendar date of a day number (inverse of {@link daysFromCivil}).
 *
 * @example
 * civilFromDays(20089) // { year: 2025, month: 1, day: 1 }
 */
export const civilFromDays = (days: number): { year: number; month: number; day: number } => {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
};

const isLeap = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Number of days in a 1-based month. @example monthLength(2024, 2) // 29 */
export const monthLength = (year: number, month: number): number => (month === 2 && isLeap(year) ? 29 : (MONTH_DAYS[month - 1] ?? 0));

/** Reads `count` ASCII digits at `at`; -1 when any of them is not a digit. */
const digits = (text: string, at: number, count: number): number => {
  let value = 0;
  for (let k = 0; k < count; k += 1) {
    const c = text.charCodeAt(at + k) - 48;
    // Written as a negated range so NaN (reading past the end) fails too.
    if (!(c >= 0 && c <= 9)) return -1;
    value = value * 10 + c;
  }
  return value;
};

/** Parses `Z` or `±hh:mm` at `at` (which must be the end of the text) into minutes east of UTC. */
const readOffset = (text: string, at: number): { minutes: number; zulu: boolean } | undefined => {
  if (text.length === at + 1 && text.charCodeAt(at) === 90 /* Z */) return { minutes: 0, zulu: true };
  const sign = text.charCodeAt(at);
  if (text.length !== at + 6 || (sign !== 43 && sign !== 45) || text.charCodeAt(at + 3) !== 58) return undefined;
  const hours = digits(text, at + 1, 2);
  const minutes = digits(text, at + 4, 2);
  if (hours < 0 || minutes < 0 || hours > 14 || minutes > 59) return undefined;
  return { minutes: (sign === 45 ? -1 : 1) * (hours * 60 + minutes), zulu: false };
};

/** Parses `hh:mm[:ss[.f{1,3}]]` at 11 and returns milliseconds into the day plus where it stopped. */
const readClock = (text: string, at: number): { ms: number; next: number } | undefined => {
  const hh = digits(text, at, 2);
  const mm = digits(text, at + 3, 2);
  if (hh < 0 || mm < 0 || hh > 23 || mm > 59 || text.charCodeAt(at + 2) !== 58) return undefined;
  let next = at + 5;
  let seconds = 0;
  let millis = 0;
  if (text.charCodeAt(next) === 58 /* : */) {
    seconds = digits(text, next + 1, 2);
    if (seconds < 0 || seconds > 59) return undefined;
    next += 3;
    if (text.charCodeAt(next) === 46 /* . */) {
      let width = 0;
      while (width < 3 && digits(text, next + 1 + width, 1) >= 0) width += 1;
      if (width === 0) return undefined;
      millis = digits(text, next + 1, width) * 10 ** (3 - width);
      next += 1 + width;
    }
  }
  return { ms: ((hh * 60 + mm) * 60 + seconds) * 1000 + millis, next };
};

/**
 * Parses `YYYY-MM-DD` or `YYYY-MM-DDThh:mm[:ss[.sss]](Z|±hh:mm)`; `undefined` for anything
 * else, including impossible calendar days such as `2025-02-29`.
 *
 * @example
 * readTimePoint('2025-02-01T00:00:00+02:00')?.ms // Date.UTC(2025, 0, 31, 22)
 */
export const readTimePoint = (text: string): TimePointValue | undefined => {
  if (text.length < 10 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45) return undefined;
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > monthLength(year, month)) return undefined;
  const dayMs = daysFromCivil(year, month, day) * DAY_MS;
  if (text.length === 10) return { ms: dayMs, ...DATE_FORMAT };
  if (text.charCodeAt(10) !== 84 /* T */) return undefined;
  const clock = readClock(text, 11);
  if (!clock) return undefined;
  const offset = readOffset(text, clock.next);
  if (!offset) return undefined;
  return { ms: dayMs + clock.ms - offset.minutes * MINUTE_MS, form: 'instant', offsetMinutes: offset.minutes, zulu: offset.zulu };
};

/**
 * Milliseconds of a point already validated by the contract, with a fast path for plain dates.
 * Returns `NaN` for text that is not a time point, so hot loops need no allocation or try.
 *
 * @example
 * pointMs('2025-07-01') // Date.UTC(2025, 6, 1)
 */
export const pointMs = (text: string): number => {
  if (text.length === 10) {
    const year = digits(text, 0, 4);
    const month = digits(text, 5, 2);
    const day = digits(text, 8, 2);
    if (year >= 0 && month >= 1 && month <= 12 && day >= 1 && day <= monthLength(year, month) && text.charCodeAt(4) === 45 && text.charCodeAt(7) === 45) {
      return daysFromCivil(year, month, day) * DAY_MS;
    }
    return Number.NaN;
  }
  return readTimePoint(text)?.ms ?? Number.NaN;
};

const pad = (value: number, width: number): string => String(value).padStart(width, '0');

const formatOffset = (format: TimeFormat): string => {
  if (format.zulu) return 'Z';
  const sign = format.offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(format.offsetMinutes);
  return `${sign}${pad(Math.floor(abs / 60), 2)}:${pad(abs % 60, 2)}`;
};

/** `YYYY-MM-DD` of a day number. */
const formatDay = (days: number): string => {
  const { year, month, day } = civilFromDays(days);
  return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`;
};

/**
 * Writes a point in a given form: dates as `YYYY-MM-DD`, instants as
 * `YYYY-MM-DDThh:mm:ss[.sss]` in the format's offset. A date form needs a whole-day value.
 *
 * @example
 * formatTimePoint(Date.UTC(2025, 0, 31, 22), { form: 'instant', offsetMinutes: 120, zulu: false })
 * // '2025-02-01T00:00:00+02:00'
 */
export const formatTimePoint = (ms: number, format: TimeFormat): string => {
  if (format.form === 'date') return formatDay(Math.floor(ms / DAY_MS));
  const local = ms + format.offsetMinutes * MINUTE_MS;
  const days = Math.floor(local / DAY_MS);
  const inDay = local - days * DAY_MS;
  const hh = Math.floor(inDay / 3_600_000);
  const mm = Math.floor((inDay % 3_600_000) / MINUTE_MS);
  const ss = Math.floor((inDay % MINUTE_MS) / 1000);
  const millis = inDay % 1000;
  const fraction = millis === 0 ? '' : `.${pad(millis, 3)}`;
  return `${formatDay(days)}T${pad(hh, 2)}:${pad(mm, 2)}:${pad(ss, 2)}${fraction}${formatOffset(format)}`;
};

/** The format a parsed point was written in. @example formatOf(readTimePoint('2025-01-01T00:00:00Z')!).zulu // true */
export const formatOf = (point: TimePointValue): TimeFormat => ({ form: point.form, offsetMinutes: point.offsetMinutes, zulu: point.zulu });
