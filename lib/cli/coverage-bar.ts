import type { RunResource } from '../contract';
import { pictureOf, type GapCategory } from '../web/geometry';
import { DAY_MS, dayLabel, monthName, timeMs } from '../web/time';

/** Columns of the bar: one year is drawn about nine days to a column. */
export const BAR_COLUMNS = 40;

/** One glyph per kind of column; a column shows the most doubtful thing inside it. */
export const BAR_GLYPHS = { read: '█', rechecked: '▒', unread: '░' } as const;

const GLYPH_OF: Readonly<Record<GapCategory, string>> = {
  'rechecked-empty': BAR_GLYPHS.rechecked,
  'data-found': BAR_GLYPHS.rechecked,
  unchecked: BAR_GLYPHS.unread,
  unread: BAR_GLYPHS.unread,
};

const RANK: Readonly<Record<string, number>> = { [BAR_GLYPHS.read]: 0, [BAR_GLYPHS.rechecked]: 1, [BAR_GLYPHS.unread]: 2 };

/** The legend printed under the bar. */
export const BAR_LEGEND = `${BAR_GLYPHS.read} read   ${BAR_GLYPHS.rechecked} gap, re-checked   ${BAR_GLYPHS.unread} gap, unread or unchecked`;

const endLabels = (from: string, toExclusive: string): [string, string] => {
  const start = timeMs(from);
  const last = timeMs(toExclusive) - 1;
  const a = new Date(start);
  const b = new Date(last);
  if ((last - start) / DAY_MS < 45) return [dayLabel(start), dayLabel(last)];
  if (a.getUTCFullYear() === b.getUTCFullYear()) return [monthName(a.getUTCMonth()), monthName(b.getUTCMonth())];
  return [`${monthName(a.getUTCMonth())} ${a.getUTCFullYear()}`, `${monthName(b.getUTCMonth())} ${b.getUTCFullYear()}`];
};

/**
 * The answer's coverage of a time universe as one line of `columns` glyphs between the first and
 * last month: column `c` stands for the fraction [c/columns, (c+1)/columns) of the universe and
 * shows `░` when an unread or unchecked gap touches it, else `▒` when a re-checked gap does, else
 * `█`. Undefined for other universes and for runs without coverage yet.
 *
 * @example
 * coverageBar(taxRun) // 'Jan ███████████████████▒████████████████████ Dec'
 */
export const coverageBar = (run: RunResource, columns = BAR_COLUMNS): string | undefined => {
  if (run.universe.dimension !== 'time' || !run.answer) return undefined;
  const cells: string[] = Array.from({ length: columns }, () => BAR_GLYPHS.read);
  for (const gap of pictureOf(run).gaps) {
    const glyph = GLYPH_OF[gap.category];
    for (const span of gap.spans) {
      const first = Math.max(0, Math.floor(span.from * columns));
      const last = Math.min(columns - 1, Math.ceil(span.to * columns) - 1);
      for (let c = first; c <= last; c += 1) {
        if ((RANK[glyph] ?? 0) > (RANK[cells[c] ?? ''] ?? 0)) cells[c] = glyph;
      }
    }
  }
  const [left, right] = endLabels(run.universe.from, run.universe.toExclusive);
  return `${left} ${cells.join('')} ${right}`;
};
