/**
 * Where labels go, computed without a browser: which ids or files of an axis get a label so that
 * no two collide, where a gap's label hangs, and how a list of ids is written with ranges.
 *
 * Text widths are estimated, not measured: the axis labels are set in a monospace font (every
 * character one advance wide), and the estimate is rounded up, so a label drawn is never wider
 * than the room reserved for it. The browser tests check the rendered boxes.
 */

/** A named stretch of the axis, `from` < `to`, both in [0, 1]: an id's cell or a file's section. */
export interface LabelledSpan {
  readonly from: number;
  readonly to: number;
  readonly label: string;
}

/** How label widths are estimated and how much room is kept around them, in pixels. */
export interface LabelMetrics {
  /** The width of one character, rounded up (a wide East Asian character counts twice). */
  readonly charPx: number;
  /** The least room between two labels. */
  readonly gapPx: number;
  /** Text starts this far right of its mark. */
  readonly padPx: number;
  /** A label is never drawn wider than this; longer text is shortened with `…`. */
  readonly maxPx: number;
  /** A section too narrow for this many characters of its label is labelled by stride instead. */
  readonly fitChars: number;
}

/**
 * The axis labels' metrics: 11 px monospace fonts advance 6.6 px (0.6 em) per character, so 7 px
 * leaves room for any of them.
 */
export const AXIS_LABEL_METRICS: LabelMetrics = { charPx: 7, gapPx: 8, padPx: 2, maxPx: 182, fitChars: 10 };

/**
 * The gap labels' metrics: 12 px sans-serif text averages under 7 px per character; 7.5 px leaves
 * room for wide letters.
 */
export const GAP_LABEL_METRICS: LabelMetrics = { charPx: 7.5, gapPx: 8, padPx: 0, maxPx: 240, fitChars: 0 };

/** One label placed on the axis: its box in fractions of the axis, its text and the full name. */
export interface AxisLabel {
  /** The index of the labelled section. */
  readonly index: number;
  /** Where the label's box begins (the section's start) and ends, text and padding included. */
  readonly from: number;
  readonly to: number;
  /** The text drawn: the label, shortened with `…` when it is longer than `maxPx`. */
  readonly text: string;
  /** The section's whole label. */
  readonly title: string;
}

// Hangul, CJK, Hiragana, Katakana, full-width forms and most emoji take two columns.
const WIDE = /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{1f300}-\u{1faff}\u{20000}-\u{3fffd}]/u;

/**
 * A text's width in character advances: one per code point, two for a wide one.
 *
 * @example
 * textUnits('T-1001') // 6
 */
export const textUnits = (text: string): number => {
  let units = 0;
  for (const char of text) units += WIDE.test(char) ? 2 : 1;
  return units;
};

/**
 * Shortens a text to at most `units` advances with `…`, keeping its start (ids) or its end
 * (paths, whose file name is at the end).
 *
 * @example
 * shorten('lib/web/geometry.ts', 12, 'end') // '…geometry.ts'
 */
export const shorten = (text: string, units: number, keep: 'start' | 'end' = 'start'): string => {
  if (textUnits(text) <= units) return text;
  if (units <= 0) return '';
  const chars = [...text];
  const kept: string[] = [];
  let used = 1; // the ellipsis
  for (const char of keep === 'start' ? chars : chars.reverse()) {
    const width = WIDE.test(char) ? 2 : 1;
    if (used + width > units) break;
    kept.push(char);
    used += width;
  }
  return keep === 'start' ? `${kept.join('')}…` : `…${kept.reverse().join('')}`;
};

/**
 * Label strides, smallest first: 1, 2, 5, 10, 20, 50, … up to `limit`.
 *
 * @example
 * strides(60) // [1, 2, 5, 10, 20, 50, 60]
 */
export const strides = (limit: number): number[] => {
  const out: number[] = [];
  for (let scale = 1; scale <= limit; scale *= 10) {
    for (const m of [1, 2, 5]) if (m * scale < limit) out.push(m * scale);
  }
  if (limit >= 1) out.push(limit);
  return out;
};

/**
 * The labels an axis of named sections (ids, files) shows, so that no two overlap and none runs
 * past the axis's end:
 * - when each section has room for its label (or `fitChars` of it), every section is labelled,
 *   each label shortened to its section;
 * - otherwise every k-th section is labelled, whole (up to `maxPx`, or the axis), with k the
 *   smallest of 1, 2, 5, 10, 20, 50, … whose k sections hold the widest label. A label that would still touch the one before it,
 *   or run past the end, is left out.
 *
 * @example
 * // 60 ids T-1001…T-1060 on 680 px: cells of 11.3 px, labels of 2 + 6 × 7 = 44 px (+ 8 px room):
 * // every 5th id (56.7 px) is labelled, T-1001, T-1006, …, T-1056.
 * fitSectionLabels(sections, 680).length // 12
 */
export const fitSectionLabels = (
  sections: readonly LabelledSpan[],
  axisPx: number,
  metrics: LabelMetrics = AXIS_LABEL_METRICS,
  keep: 'start' | 'end' = 'start',
): AxisLabel[] => {
  if (sections.length === 0 || axisPx <= 0) return [];
  const { charPx, gapPx, padPx } = metrics;
  // Sections of equal width come out a hair apart in floating point; a millionth of a pixel is no room.
  const slack = 1e-6;
  const cellPx = sections.reduce((least, s) => Math.min(least, (s.to - s.from) * axisPx), Infinity) + slack;
  const cellUnits = Math.floor((cellPx - gapPx - padPx) / charPx);
  const maxUnits = Math.floor((Math.min(metrics.maxPx, axisPx) - padPx) / charPx);
  const whole = sections.map((s) => shorten(s.label, maxUnits, keep));
  const widestUnits = whole.reduce((most, text) => Math.max(most, textUnits(text)), 0);

  let stride: number;
  let texts: readonly string[];
  if (cellUnits >= 1 && cellUnits >= Math.min(widestUnits, metrics.fitChars)) {
    stride = 1;
    texts = sections.map((s) => shorten(s.label, cellUnits, keep));
  } else {
    const needPx = padPx + widestUnits * charPx + gapPx;
    stride = strides(sections.length).find((k) => k * cellPx >= needPx) ?? sections.length;
    texts = whole;
  }

  const labels: AxisLabel[] = [];
  let lastTo = -Infinity;
  for (let i = 0; i < sections.length; i += stride) {
    const section = sections[i];
    const text = texts[i];
    if (!section || !text) continue;
    const from = section.from;
    const to = from + (padPx + textUnits(text) * charPx) / axisPx;
    if (to > 1 + slack / axisPx || from < lastTo + (gapPx - slack) / axisPx) continue;
    labels.push({ index: i, from, to, text, title: section.label });
    lastTo = to;
  }
  return labels;
};

/** A label to hang under a mark: the mark's centre and the label's text, in pixels of the axis. */
export interface HangingLabel {
  readonly centrePx: number;
  readonly text: string;
}

/** Where a hanging label was put: its row (0 is the nearest) and its box, in pixels of the axis. */
export interface PlacedLabel {
  readonly row: number;
  readonly fromPx: number;
  readonly toPx: number;
}

/**
 * Hangs labels under their marks in up to `rows` rows, each centred on its mark where the axis
 * allows (pushed inside at either end), in the nearest row where it touches no other label. A
 * label in a lower row hangs on a leader line from its mark, so it is put there only if that line
 * crosses no label above it, and no label goes where an earlier leader line passes. A label that
 * fits in no row gets `undefined`: it is not drawn (the list of gaps names it).
 *
 * @example
 * // two labels 75 px wide centred 50 px apart: the second one goes to the second row.
 * placeHangingLabels([{ centrePx: 100, text: 'data found' }, { centrePx: 150, text: 'data found' }], 680)
 * // [{ row: 0, fromPx: 62.5, toPx: 137.5 }, { row: 1, fromPx: 112.5, toPx: 187.5 }]
 */
export const placeHangingLabels = (
  labels: readonly HangingLabel[],
  axisPx: number,
  rows = 2,
  metrics: LabelMetrics = GAP_LABEL_METRICS,
): Array<PlacedLabel | undefined> => {
  const placed: Array<PlacedLabel & { readonly leaderPx: number }> = [];
  const clear = metrics.gapPx / 2;
  return labels.map((label) => {
    const width = textUnits(label.text) * metrics.charPx;
    if (width > axisPx) return undefined;
    const fromPx = Math.min(Math.max(0, label.centrePx - width / 2), axisPx - width);
    const toPx = fromPx + width;
    const fits = (row: number) =>
      placed.every((other) => {
        if (other.row === row) return fromPx >= other.toPx + metrics.gapPx || toPx + metrics.gapPx <= other.fromPx;
        // A label above this one must leave room for this one's leader line, and a leader line
        // on its way to a lower label must not cross this one.
        if (other.row < row) return label.centrePx < other.fromPx - clear || label.centrePx > other.toPx + clear;
        return other.leaderPx < fromPx - clear || other.leaderPx > toPx + clear;
      });
    const row = Array.from({ length: rows }, (_, r) => r).find(fits);
    if (row === undefined) return undefined;
    const place = { row, fromPx, toPx };
    placed.push({ ...place, leaderPx: label.centrePx });
    return place;
  });
};

/** Ids that follow one another: `first` … `last`, `count` of them. */
export interface IdRun {
  readonly first: string;
  readonly last: string;
  readonly count: number;
}

const NUMBERED = /^(.*?)(\d+)(\D*)$/;

/**
 * True when `next` is the id after `previous`: the same text around a number one higher, written
 * with as many digits (`T-0099` → `T-0100`) or with no leading zero (`T-99` → `T-100`).
 */
export const follows = (previous: string, next: string): boolean => {
  const a = NUMBERED.exec(previous);
  const b = NUMBERED.exec(next);
  if (!a || !b || a[1] !== b[1] || a[3] !== b[3]) return false;
  const [da, db] = [a[2] ?? '', b[2] ?? ''];
  const samePadding = da.length === db.length || (!da.startsWith('0') && !db.startsWith('0'));
  return samePadding && BigInt(db) === BigInt(da) + 1n;
};

/**
 * Splits a list of ids into runs of consecutive ids, in the list's order.
 *
 * @example
 * idRuns(['T-7', 'T-8', 'T-9', 'web:pricing']) // [{ first: 'T-7', last: 'T-9', count: 3 }, { first: 'web:pricing', … count: 1 }]
 */
export const idRuns = (ids: readonly string[]): IdRun[] => {
  const runs: IdRun[] = [];
  for (const id of ids) {
    const last = runs[runs.length - 1];
    if (last && follows(last.last, id)) runs[runs.length - 1] = { first: last.first, last: id, count: last.count + 1 };
    else runs.push({ first: id, last: id, count: 1 });
  }
  return runs;
};

/**
 * Ids in words: three or more consecutive ids as a range, at most `shown` items, and how many
 * ids the rest are.
 *
 * @example
 * idsText(['T-7', 'T-8', 'T-9', 'T-12', 'T-13']) // 'T-7 – T-9, T-12, T-13'
 * idsText(['a', 'b', 'c', 'd'], 2)               // 'a, b and 2 more'
 */
export const idsText = (ids: readonly string[], shown = 5): string => {
  const items = idRuns(ids).flatMap((run): Array<{ text: string; count: number }> =>
    run.count >= 3
      ? [{ text: `${run.first} – ${run.last}`, count: run.count }]
      : run.count === 2
        ? [
            { text: run.first, count: 1 },
            { text: run.last, count: 1 },
          ]
        : [{ text: run.first, count: 1 }],
  );
  if (items.length <= shown) return items.map((i) => i.text).join(', ');
  const rest = items.slice(shown).reduce((sum, i) => sum + i.count, 0);
  return `${items
    .slice(0, shown)
    .map((i) => i.text)
    .join(', ')} and ${rest.toLocaleString('en-GB')} more`;
};
