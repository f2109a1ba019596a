import type { CoverageGap, FileScope, Observed, RunResource, SubtaskView, Universe } from '../contract';
import { DAY_MS, dayLabel, inclusiveEndMs, isDateForm, monthName, timeMs } from './time';

/**
 * What a run resource looks like on one axis, computed without a browser.
 *
 * Every universe is laid on the axis [0, 1]: a time universe linearly; an ids universe as one
 * cell of equal width per id (a grid of columns); a paths universe as one section of equal width
 * per file, its lines spread across the section. Assignments, observations, gaps and overlaps are
 * then spans on that axis, and the drawing only scales them to pixels.
 */

/** A stretch of the axis, `from` < `to`, both in [0, 1]. */
export interface Span {
  readonly from: number;
  readonly to: number;
}

/** One id's cell or one file's section of the axis, with its name. */
export interface Section extends Span {
  readonly label: string;
}

/** A labelled mark on a time axis (month or year starts). */
export interface Tick {
  readonly at: number;
  readonly label: string;
}

/**
 * How a gap is drawn, one of the four statuses a reader tells apart:
 * `rechecked-empty` (a re-check found nothing), `data-found` (a re-check found records and they were
 * included), `unchecked` (nobody re-checked it, or the re-check failed), `unread` (its subtask did
 * not end `ok`, so the assigned region was never read).
 */
export type GapCategory = 'rechecked-empty' | 'data-found' | 'unchecked' | 'unread';

/** The words each gap category is labelled with, so it is never told by colour alone. */
export const GAP_LABELS: Readonly<Record<GapCategory, string>> = {
  'rechecked-empty': 're-checked empty',
  'data-found': 'data found',
  unchecked: 'unchecked',
  unread: 'unread',
};

/** Subtask states in words. */
export const STATE_LABELS: Readonly<Record<string, string>> = {
  pending: 'pending',
  running: 'running',
  ok: 'ok',
  timed_out: 'timed out',
  invalid: 'invalid',
  empty: 'empty',
  cancelled: 'cancelled',
};

/** A state in words: `timed_out` → `timed out`. */
export const stateLabel = (state: string): string => STATE_LABELS[state] ?? state.replace(/_/g, ' ');

export interface SubtaskMark {
  readonly id: string;
  readonly worker: string;
  readonly round: number;
  readonly state: string;
  readonly stateLabel: string;
  /** `retry of C`, `re-check of B`, or empty for a first-round subtask. */
  readonly lineage: string;
  readonly assigned: readonly Span[];
  readonly observed: readonly Span[];
  /** The assignment and the observation in words, for the hover text. */
  readonly assignedText: string;
  readonly observedText: string;
  readonly usageText: string;
  readonly reason: string | undefined;
  /** Results that arrived after the subtask was sealed, kept as evidence. */
  readonly late: number;
}

export interface GapMark {
  readonly spans: readonly Span[];
  readonly category: GapCategory;
  readonly label: string;
  /** Where the gap is, in words: `28 Jun 2025 – 30 Jun 2025`. */
  readonly where: string;
  /** What is known about it: who left it, how it was re-checked, how many records were found. */
  readonly detail: string;
  readonly subtaskId: string | undefined;
}

export interface OverlapMark {
  readonly spans: readonly Span[];
  readonly where: string;
  readonly subtaskIds: readonly string[];
}

/** A whole run, ready to draw. */
export interface Picture {
  readonly runId: string;
  readonly goal: string;
  readonly status: RunResource['status'];
  readonly dimension: Universe['dimension'];
  /** The universe in words: `1 Jan 2025 – 31 Dec 2025`, `5 sources`, `3 files`. */
  readonly universeText: string;
  readonly sections: readonly Section[];
  readonly ticks: readonly Tick[];
  readonly subtasks: readonly SubtaskMark[];
  /**
   * The run's subtasks in all. More than `subtasks.length` when the run resource carried only the
   * first page of a large run (`subtasksPage`): the picture then draws that page's lanes, while the
   * answer's coverage, gaps and overlaps always cover every subtask.
   */
  readonly subtaskTotal: number;
  readonly gaps: readonly GapMark[];
  readonly overlaps: readonly OverlapMark[];
  /** `true`/`false` once the run has ended, `null` while it runs. */
  readonly complete: boolean | null;
  readonly statement: string | undefined;
  readonly progressText: string;
}

/** A region of the universe as the contract writes it (scope, gap, overlap, observation). */
interface Region {
  readonly from?: string | undefined;
  readonly toExclusive?: string | undefined;
  readonly ids?: readonly string[] | undefined;
  readonly files?: readonly FileScope[] | undefined;
}

/** Sorts spans and joins those that touch or overlap. */
export const mergeSpans = (spans: readonly Span[]): Span[] => {
  const sorted = spans.filter((s) => s.to > s.from).sort((a, b) => a.from - b.from);
  const merged: Span[] = [];
  for (const span of sorted) {
    const last = merged[merged.length - 1];
    if (last && span.from <= last.to + 1e-12) merged[merged.length - 1] = { from: last.from, to: Math.max(last.to, span.to) };
    else merged.push(span);
  }
  return merged;
};

const clamp01 = (x: number): number => Math.min(1, Math.max(0, x));

/** Maps regions of one universe onto the axis. */
interface Axis {
  readonly sections: readonly Section[];
  readonly ticks: readonly Tick[];
  readonly text: string;
  spans(region: Region): Span[];
  describe(region: Region): string;
}

const timeTicks = (startMs: number, endMs: number): Tick[] => {
  const days = (endMs - startMs) / DAY_MS;
  const at = (ms: number) => (ms - startMs) / (endMs - startMs);
  const ticks: Tick[] = [];
  const first = new Date(startMs);
  if (days >= 45 && days <= 3 * 366) {
    // Month starts, labelled `Jan`; every second or third month on long ranges.
    const step = days > 2 * 366 ? 3 : days > 366 ? 2 : 1;
    for (let m = 0; ; m += 1) {
      const ms = Date.UTC(first.getUTCFullYear(), first.getUTCMonth() + m, 1);
      if (ms >= endMs) break;
      if (ms >= startMs && m % step === 0) ticks.push({ at: at(ms), label: monthName(new Date(ms).getUTCMonth()) });
    }
  } else if (days > 3 * 366) {
    const step = Math.max(1, Math.ceil(days / 366 / 12));
    for (let y = first.getUTCFullYear(); ; y += 1) {
      const ms = Date.UTC(y, 0, 1);
      if (ms >= endMs) break;
      if (ms >= startMs && y % step === 0) ticks.push({ at: at(ms), label: String(y) });
    }
  } else {
    const stepDays = Math.max(1, Math.ceil(days / 12));
    for (let ms = Date.UTC(first.getUTCFullYear(), first.getUTCMonth(), first.getUTCDate()); ms < endMs; ms += stepDays * DAY_MS) {
      if (ms >= startMs) ticks.push({ at: at(ms), label: dayLabel(ms).replace(/ \d{4}$/, '') });
    }
  }
  return ticks;
};

const timeAxis = (universe: Extract<Universe, { dimension: 'time' }>): Axis => {
  const start = timeMs(universe.from);
  const end = timeMs(universe.toExclusive);
  const dates = isDateForm(universe.from);
  const rangeText = (fromMs: number, toMs: number) =>
    dates ? `${dayLabel(fromMs)} – ${dayLabel(toMs - DAY_MS)}` : `${new Date(fromMs).toISOString()} – ${new Date(toMs).toISOString()} (end excluded)`;
  return {
    sections: [],
    ticks: timeTicks(start, end),
    text: rangeText(start, end),
    spans: (region) => {
      if (region.from === undefined || region.toExclusive === undefined) return [];
      const from = clamp01((timeMs(region.from) - start) / (end - start));
      const to = clamp01((timeMs(region.toExclusive) - start) / (end - start));
      return to > from ? [{ from, to }] : [];
    },
    describe: (region) =>
      region.from === undefined || region.toExclusive === undefined ? '' : rangeText(timeMs(region.from), timeMs(region.toExclusive)),
  };
};

const listText = (items: readonly string[], shown = 5): string =>
  items.length <= shown ? items.join(', ') : `${items.slice(0, shown).join(', ')} and ${items.length - shown} more`;

const idsAxis = (universe: Extract<Universe, { dimension: 'ids' }>): Axis => {
  const ids = [...new Set(universe.ids)];
  const index = new Map(ids.map((id, i) => [id, i]));
  const cell = (i: number): Span => ({ from: i / ids.length, to: (i + 1) / ids.length });
  const noun = universe.noun ?? 'id';
  return {
    sections: ids.map((id, i) => ({ ...cell(i), label: id })),
    ticks: [],
    text: `${ids.length} ${noun}${ids.length === 1 ? '' : 's'}`,
    spans: (region) =>
      mergeSpans((region.ids ?? []).flatMap((id) => {
        const i = index.get(id);
        return i === undefined ? [] : [cell(i)];
      })),
    describe: (region) => listText(region.ids ?? []),
  };
};

const lineCount = (files: readonly FileScope[], path: string): number =>
  files.filter((f) => f.path === path).reduce((most, f) => Math.max(most, ...(f.lines ?? []).map(([, last]) => last)), 0);

const pathsAxis = (universe: Extract<Universe, { dimension: 'paths' }>, run: RunResource): Axis => {
  const paths = [...new Set(universe.files.map((f) => f.path))];
  const index = new Map(paths.map((p, i) => [p, i]));
  // A file's section is as long as the highest line anything names in it; a file nobody numbers
  // lines in is one undivided section.
  const named: FileScope[] = [
    ...universe.files,
    ...run.subtasks.flatMap((s) => [...('files' in s.assigned ? s.assigned.files : []), ...(s.observed && 'files' in s.observed ? s.observed.files : [])]),
    ...(run.answer?.coverage.gaps ?? []).flatMap((g) => g.files ?? []),
  ];
  const lines = paths.map((p) => lineCount(named, p));
  const width = 1 / Math.max(1, paths.length);
  const fileText = (f: FileScope) => (f.lines ? `${f.path}:${f.lines.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(',')}` : f.path);
  return {
    sections: paths.map((path, i) => ({ from: i * width, to: (i + 1) * width, label: path })),
    ticks: [],
    text: `${paths.length} file${paths.length === 1 ? '' : 's'}`,
    spans: (region) =>
      mergeSpans((region.files ?? []).flatMap((f) => {
        const i = index.get(f.path);
        if (i === undefined) return [];
        const base = i * width;
        const total = lines[i] ?? 0;
        if (!f.lines || total === 0) return [{ from: base, to: base + width }];
        return f.lines.map(([first, last]) => ({ from: base + ((first - 1) / total) * width, to: base + (last / total) * width }));
      })),
    describe: (region) => listText((region.files ?? []).map(fileText)),
  };
};

const axisOf = (run: RunResource): Axis => {
  const u = run.universe;
  if (u.dimension === 'time') return timeAxis(u);
  if (u.dimension === 'ids') return idsAxis(u);
  return pathsAxis(u, run);
};

/** An observation as a region: an inclusive `minDate..maxDate` becomes a half-open range. */
const observedRegion = (observed: Observed | null): Region | undefined => {
  if (observed === null) return undefined;
  if ('minDate' in observed) {
    if (observed.minDate === null || observed.maxDate === null) return undefined;
    return { from: observed.minDate, toExclusive: new Date(inclusiveEndMs(observed.maxDate)).toISOString() };
  }
  return observed;
};

const observedWords = (axis: Axis, observed: Observed | null): string => {
  if (observed === null) return 'nothing reported';
  const records = `${observed.recordCount} record${observed.recordCount === 1 ? '' : 's'}`;
  if ('minDate' in observed) {
    if (observed.minDate === null || observed.maxDate === null) return `no records`;
    const dates = isDateForm(observed.minDate);
    const range = dates
      ? `${dayLabel(timeMs(observed.minDate))} – ${dayLabel(timeMs(observed.maxDate))}`
      : `${observed.minDate} – ${observed.maxDate}`;
    return `${range} (${records})`;
  }
  const region = axis.describe(observed);
  return region ? `${region} (${records})` : `no records`;
};

const lineageText = (s: SubtaskView): string => {
  if (!s.lineage) return '';
  return s.lineage.kind === 'retry' ? `retry ${s.lineage.attempt} of ${s.lineage.of}` : `re-check of ${s.lineage.of}`;
};

const subtaskMark = (axis: Axis, s: SubtaskView): SubtaskMark => {
  const observed = observedRegion(s.observed);
  return {
    id: s.id,
    worker: s.worker,
    round: s.round,
    state: s.state,
    stateLabel: stateLabel(s.state),
    lineage: lineageText(s),
    assigned: axis.spans(s.assigned),
    observed: observed ? axis.spans(observed) : [],
    assignedText: axis.describe(s.assigned),
    observedText: observedWords(axis, s.observed),
    usageText: `${s.usage.modelCalls} model call${s.usage.modelCalls === 1 ? '' : 's'}, estimated cost ${s.usage.estimatedCost}`,
    reason: s.reason,
    late: s.late?.length ?? 0,
  };
};

/**
 * The category a gap is drawn in.
 *
 * @example
 * gapCategory({ kind: 'observed', status: 'confirmed_empty' }) // 'rechecked-empty'
 */
export const gapCategory = (gap: Pick<CoverageGap, 'kind' | 'status'>): GapCategory => {
  if (gap.kind === 'unread') return 'unread';
  if (gap.status === 'confirmed_empty') return 'rechecked-empty';
  if (gap.status === 'data_found') return 'data-found';
  return 'unchecked';
};

const gapDetail = (gap: CoverageGap): string => {
  const parts: string[] = [];
  if (gap.kind === 'assignment') parts.push('assigned to no subtask');
  if (gap.kind === 'observed') parts.push(`${gap.subtaskId ?? 'its subtask'}'s data stopped short of its assignment`);
  if (gap.kind === 'unread') parts.push(`not read: ${gap.subtaskId ?? 'its subtask'} ended ${stateLabel(gap.reason ?? 'missing_outcome')}`);
  if (gap.recheckedAgainst) {
    const by = gap.recheckSubtaskId ? ` (${gap.recheckSubtaskId})` : '';
    if (gap.status === 'confirmed_empty') parts.push(`re-checked against ${gap.recheckedAgainst}${by}: no records`);
    else if (gap.status === 'data_found') parts.push(`re-checked against ${gap.recheckedAgainst}${by}: ${gap.records ?? 0} records found and included`);
    else parts.push(`re-check against ${gap.recheckedAgainst}${by}: ${gap.status.replace(/_/g, ' ')}`);
  } else if (gap.kind !== 'unread') {
    parts.push('not re-checked');
  }
  return parts.join('; ');
};

/**
 * Lays a run resource out on the axis: the universe, each subtask's assignment and what its data
 * covered, the answer's gaps (by category) and overlaps, and the statement.
 *
 * @example
 * const picture = pictureOf(run);
 * picture.gaps[0]?.label // 're-checked empty'
 */
export const pictureOf = (run: RunResource): Picture => {
  const axis = axisOf(run);
  const coverage = run.answer?.coverage;
  const { dispatched, terminal } = run.progress;
  return {
    runId: run.runId,
    goal: run.goal,
    status: run.status,
    dimension: run.universe.dimension,
    universeText: axis.text,
    sections: axis.sections,
    ticks: axis.ticks,
    subtasks: run.subtasks.map((s) => subtaskMark(axis, s)),
    subtaskTotal: run.subtasksPage?.total ?? run.subtasks.length,
    gaps: (coverage?.gaps ?? []).map((gap) => {
      const category = gapCategory(gap);
      return {
        spans: axis.spans(gap),
        category,
        label: GAP_LABELS[category],
        where: axis.describe(gap),
        detail: gapDetail(gap),
        subtaskId: gap.subtaskId,
      };
    }),
    overlaps: (coverage?.overlaps ?? []).map((o) => ({ spans: axis.spans(o), where: axis.describe(o), subtaskIds: o.subtaskIds })),
    complete: coverage ? coverage.complete : null,
    statement: coverage?.statement,
    progressText: dispatched === 0 ? 'waiting for the first round' : `round ${run.round} · ${terminal}/${dispatched} subtasks ended`,
  };
};
