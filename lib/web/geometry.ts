import type { CoverageGap, FileScope, GapStatus, Observed, RunResource, RunStatus, SubtaskState, SubtaskView, Universe } from '../contract';
import { idsText } from './labels';
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
 * How a gap is drawn, one of four fills a reader tells apart: `rechecked-empty` (a re-check by
 * another source found nothing), `data-found` (a re-check found records and they were included),
 * `unchecked` (not settled: nobody re-checked it, or the re-check did not settle it), `unread` (its
 * subtask did not end `ok`, so the assigned region was never read). The words under a gap name
 * its exact status ({@link GAP_STATUSES}).
 */
export type GapCategory = 'rechecked-empty' | 'data-found' | 'unchecked' | 'unread';

/** The legend's words for each gap fill, so it is never told by colour alone. */
export const GAP_LABELS: Readonly<Record<GapCategory, string>> = {
  'rechecked-empty': 're-checked empty',
  'data-found': 'data found',
  unchecked: 'not settled',
  unread: 'unread',
};

/** How one gap status of the contract is drawn and said. */
export interface GapStatusLook {
  readonly category: GapCategory;
  /** The words under the gap and in the list of gaps, different for every status. */
  readonly label: string;
}

/**
 * Every gap status of the contract, drawn and said. A record over the contract's enum: a status
 * added to the contract does not compile until it is given its fill and its words here.
 */
export const GAP_STATUSES: Readonly<Record<GapStatus, GapStatusLook>> = {
  confirmed_empty: { category: 'rechecked-empty', label: 're-checked empty' },
  data_found: { category: 'data-found', label: 'data found' },
  unchecked: { category: 'unchecked', label: 'unchecked' },
  recheck_failed: { category: 'unchecked', label: 're-check failed' },
  source_unreachable: { category: 'unchecked', label: 're-check reached no source' },
  unconfirmed_empty: { category: 'unchecked', label: 're-read, unconfirmed' },
};

/** The words of an `unread` gap, whatever its status: nobody read the region at all. */
export const UNREAD_LABEL = 'unread';

/** Subtask states in words; a record over the contract's states, so a new one must be named. */
export const STATE_LABELS: Readonly<Record<SubtaskState, string>> = {
  pending: 'pending',
  running: 'running',
  ok: 'ok',
  timed_out: 'timed out',
  invalid: 'invalid',
  empty: 'empty',
  cancelled: 'cancelled',
};

/** A state in words: `timed_out` → `timed out` (and any other text with its underscores as spaces). */
export const stateLabel = (state: string): string =>
  (Object.hasOwn(STATE_LABELS, state) ? STATE_LABELS[state as SubtaskState] : undefined) ?? state.replace(/_/g, ' ');

/**
 * What the status badge says: the run's status, and for a run that succeeded, whether its answer
 * is complete. A run that succeeded with questions unanswered or gaps unsettled is
 * `succeeded-incomplete`, never drawn as a plain success.
 */
export type Verdict = 'running' | 'succeeded' | 'succeeded-incomplete' | 'failed' | 'cancelled';

/** The badge's words for each verdict. */
export const VERDICT_LABELS: Readonly<Record<Verdict, string>> = {
  running: 'running',
  succeeded: 'succeeded, complete',
  'succeeded-incomplete': 'succeeded, incomplete',
  failed: 'failed',
  cancelled: 'cancelled',
};

const unhandled = (value: never): never => {
  throw new Error(`unhandled value ${String(value)}`);
};

/**
 * The badge of a run: only a succeeded run whose coverage says `complete: true` is a success.
 *
 * @example
 * verdictOf('succeeded', false) // 'succeeded-incomplete'
 */
export const verdictOf = (status: RunStatus, complete: boolean | null): Verdict => {
  switch (status) {
    case 'running':
    case 'failed':
    case 'cancelled':
      return status;
    case 'succeeded':
      return complete === true ? 'succeeded' : 'succeeded-incomplete';
    default:
      return unhandled(status);
  }
};

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
  /**
   * While the subtask runs: what its worker's last checkpoint covered (live coverage, drawn as
   * it fills in), with the words for it; empty and `undefined` once it ended or before any.
   */
  readonly checkpointed: readonly Span[];
  readonly checkpointedText: string | undefined;
  readonly usageText: string;
  readonly reason: string | undefined;
  /** Results that arrived after the subtask was sealed, kept as evidence. */
  readonly late: number;
}

export interface GapMark {
  readonly spans: readonly Span[];
  readonly status: GapStatus;
  readonly category: GapCategory;
  /** Its status in words (`unread` for an unread gap): different for every status. */
  readonly label: string;
  /** Where the gap is, in words: `28 Jun 2025 – 30 Jun 2025`; long id lists end `and N more`. */
  readonly where: string;
  /** Where the gap is, in full for the list of gaps: every id (as ranges where they follow on). */
  readonly whereInFull: string;
  /** How big the gap is in the universe's own terms: `3 tickets`, or empty for a time or paths universe. */
  readonly size: string;
  /** What is known about it: who left it, how it was re-checked, how many records were found. */
  readonly detail: string;
  readonly subtaskId: string | undefined;
}

export interface OverlapMark {
  readonly spans: readonly Span[];
  readonly where: string;
  readonly subtaskIds: readonly string[];
}

/** A question the answer left unanswered, drawn where its subtasks were assigned. */
export interface QuestionMark {
  readonly id: string;
  /** Where the subtasks that were asked it were assigned (empty when no subtask shown was). */
  readonly spans: readonly Span[];
  /** The subtasks asked it, with how each ended: `C (timed out)`. */
  readonly askedOf: readonly string[];
}

/** A whole run, ready to draw. */
export interface Picture {
  readonly runId: string;
  readonly goal: string;
  readonly status: RunResource['status'];
  /** What the status badge says: a run that succeeded incomplete is told apart from a complete one. */
  readonly verdict: Verdict;
  readonly verdictLabel: string;
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
  /** The questions the answer left unanswered (`coverage.missingQuestions`), in its order. */
  readonly missingQuestions: readonly QuestionMark[];
  readonly overlaps: readonly OverlapMark[];
  /** `true`/`false` once the run has ended, `null` while it runs. */
  readonly complete: boolean | null;
  readonly statement: string | undefined;
  readonly progressText: string;
}

/**
 * The list of gaps beside the picture names this many ids (or ranges of them) per gap before
 * `and N more`: enough for any gap a person reads id by id; the run resource lists the rest.
 */
export const WHOLE_LIST_ITEMS = 200;

/** A region of the universe as the contract writes it (scope, gap, overlap, observation). */
interface Region {
  readonly from?: string | undefined;
  readonly toExclusive?: string | undefined;
  readonly ids?: readonly string[] | undefined;
  readonly files?: readonly FileScope[] | undefined;
}

/**
 * Sorts spans and joins those that touch or overlap, or that lie less than `within` apart (the
 * drawing joins spans closer than a pixel, which it could not show apart anyway).
 */
export const mergeSpans = (spans: readonly Span[], within = 1e-12): Span[] => {
  const sorted = spans.filter((s) => s.to > s.from).sort((a, b) => a.from - b.from);
  const merged: Span[] = [];
  for (const span of sorted) {
    const last = merged[merged.length - 1];
    if (last && span.from <= last.to + within) merged[merged.length - 1] = { from: last.from, to: Math.max(last.to, span.to) };
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
  /** The region in words, long lists shortened to their first `shown` items. */
  describe(region: Region, shown?: number): string;
  /** The region's size in the universe's terms, or empty when that is not a count. */
  size(region: Region): string;
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
    describe: (region) => (region.from === undefined || region.toExclusive === undefined ? '' : rangeText(timeMs(region.from), timeMs(region.toExclusive))),
    size: () => '',
  };
};

const listText = (items: readonly string[], shown = 5): string =>
  items.length <= shown ? items.join(', ') : `${items.slice(0, shown).join(', ')} and ${(items.length - shown).toLocaleString('en-GB')} more`;

/** How many of a noun: `1 ticket`, `1,000 tickets`. */
const counted = (n: number, noun: string): string => `${n.toLocaleString('en-GB')} ${noun}${n === 1 ? '' : 's'}`;

const idsAxis = (universe: Extract<Universe, { dimension: 'ids' }>): Axis => {
  const ids = [...new Set(universe.ids)];
  const index = new Map(ids.map((id, i) => [id, i]));
  const cell = (i: number): Span => ({ from: i / ids.length, to: (i + 1) / ids.length });
  const noun = universe.noun ?? 'id';
  // Ids in the universe's order, so that ids which follow on there are written as one range.
  const ordered = (region: Region): string[] => [...(region.ids ?? [])].sort((a, b) => (index.get(a) ?? Infinity) - (index.get(b) ?? Infinity));
  return {
    sections: ids.map((id, i) => ({ ...cell(i), label: id })),
    ticks: [],
    text: counted(ids.length, noun),
    spans: (region) => {
      // Consecutive cells are one span: built in a single pass, as a gap may name thousands of ids.
      const cells = [...new Set((region.ids ?? []).map((id) => index.get(id)).filter((i): i is number => i !== undefined))].sort((a, b) => a - b);
      const spans: Span[] = [];
      let start = -1;
      cells.forEach((i, k) => {
        if (start < 0) start = i;
        if (cells[k + 1] !== i + 1) {
          spans.push({ from: cell(start).from, to: cell(i).to });
          start = -1;
        }
      });
      return spans;
    },
    describe: (region, shown = 5) => idsText(ordered(region), shown),
    size: (region) => counted(new Set(region.ids ?? []).size, noun),
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
      mergeSpans(
        (region.files ?? []).flatMap((f) => {
          const i = index.get(f.path);
          if (i === undefined) return [];
          const base = i * width;
          const total = lines[i] ?? 0;
          if (!f.lines || total === 0) return [{ from: base, to: base + width }];
          return f.lines.map(([first, last]) => ({ from: base + ((first - 1) / total) * width, to: base + (last / total) * width }));
        }),
      ),
    describe: (region, shown = 5) => listText((region.files ?? []).map(fileText), shown),
    size: () => '',
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
    const range = dates ? `${dayLabel(timeMs(observed.minDate))} – ${dayLabel(timeMs(observed.maxDate))}` : `${observed.minDate} – ${observed.maxDate}`;
    return `${range} (${records})`;
  }
  const region = axis.describe(observed);
  return region ? `${region} (${records})` : `no records`;
};

const lineageText = (s: SubtaskView): string => {
  if (!s.lineage) return '';
  return s.lineage.kind === 'retry' ? `retry ${s.lineage.attempt} of ${s.lineage.of}` : `re-check of ${s.lineage.of}`;
};

/** Only a subtask still running shows its checkpoint: an ended one shows its outcome instead. */
const liveCheckpoint = (s: SubtaskView): SubtaskView['checkpoint'] => (s.state === 'pending' || s.state === 'running' ? s.checkpoint : undefined);

const checkpointedWords = (axis: Axis, checkpoint: NonNullable<SubtaskView['checkpoint']>): string => {
  const records = `${checkpoint.observed.recordCount} record${checkpoint.observed.recordCount === 1 ? '' : 's'}`;
  return `${checkpoint.covered.map((scope) => axis.describe(scope)).join(', ')} (${records})`;
};

const subtaskMark = (axis: Axis, s: SubtaskView): SubtaskMark => {
  const observed = observedRegion(s.observed);
  const checkpoint = liveCheckpoint(s);
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
    checkpointed: checkpoint ? mergeSpans(checkpoint.covered.flatMap((scope) => axis.spans(scope))) : [],
    checkpointedText: checkpoint && checkpoint.covered.length > 0 ? checkpointedWords(axis, checkpoint) : undefined,
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
export const gapCategory = (gap: Pick<CoverageGap, 'kind' | 'status'>): GapCategory => (gap.kind === 'unread' ? 'unread' : GAP_STATUSES[gap.status].category);

/**
 * A gap's status in words, different for every status.
 *
 * @example
 * gapLabel({ kind: 'observed', status: 'recheck_failed' }) // 're-check failed'
 */
export const gapLabel = (gap: Pick<CoverageGap, 'kind' | 'status'>): string => (gap.kind === 'unread' ? UNREAD_LABEL : GAP_STATUSES[gap.status].label);

/** What a re-check of a gap established, in words; one case per status of the contract. */
const recheckText = (gap: CoverageGap, against: string): string => {
  const by = gap.recheckSubtaskId ? ` (${gap.recheckSubtaskId})` : '';
  switch (gap.status) {
    case 'confirmed_empty':
      return `re-checked against ${against}${by}: no records`;
    case 'data_found':
      return `re-checked against ${against}${by}: ${gap.records ?? 0} records found and included`;
    case 'unchecked':
      return `re-check against ${against}${by} not made`;
    case 'recheck_failed':
      return `re-check against ${against}${by} failed`;
    case 'source_unreachable':
      return `re-check against ${against}${by} reached no source`;
    case 'unconfirmed_empty':
      return `re-read from ${against}${by}, which again returned nothing; no other source confirmed it`;
    default:
      return unhandled(gap.status);
  }
};

const gapDetail = (gap: CoverageGap): string => {
  const parts: string[] = [];
  if (gap.kind === 'assignment') parts.push('assigned to no subtask');
  if (gap.kind === 'observed') parts.push(`${gap.subtaskId ?? 'its subtask'}'s data stopped short of its assignment`);
  if (gap.kind === 'unread') parts.push(`not read: ${gap.subtaskId ?? 'its subtask'} ended ${stateLabel(gap.reason ?? 'missing_outcome')}`);
  if (gap.recheckedAgainst) parts.push(recheckText(gap, gap.recheckedAgainst));
  else if (gap.kind !== 'unread') parts.push('not re-checked');
  if (gap.notFollowedUp === 'history_bound') parts.push("no follow-up fitted the execution's history");
  return parts.join('; ');
};

/** The unanswered questions, each where the subtasks asked it were assigned. */
const questionMarks = (axis: Axis, run: RunResource): QuestionMark[] =>
  (run.answer?.coverage.missingQuestions ?? []).map((id) => {
    const asked = run.subtasks.filter((s) => s.questionIds.includes(id));
    return {
      id,
      spans: mergeSpans(asked.flatMap((s) => axis.spans(s.assigned))),
      askedOf: asked.map((s) => `${s.id} (${stateLabel(s.state)})`),
    };
  });

/**
 * Lays a run resource out on the axis: the universe, each subtask's assignment and what its data
 * covered, the answer's gaps (by category) and overlaps, and the statement.
 *
 * @example
 * const picture = pictureOf(run);
 * picture.gaps[0]?.label // 're-checked empty'
 * picture.verdictLabel   // 'succeeded, complete'
 */
export const pictureOf = (run: RunResource): Picture => {
  const axis = axisOf(run);
  const coverage = run.answer?.coverage;
  const { dispatched, terminal } = run.progress;
  const verdict = verdictOf(run.status, coverage ? coverage.complete : null);
  return {
    runId: run.runId,
    goal: run.goal,
    status: run.status,
    verdict,
    verdictLabel: VERDICT_LABELS[verdict],
    dimension: run.universe.dimension,
    universeText: axis.text,
    sections: axis.sections,
    ticks: axis.ticks,
    subtasks: run.subtasks.map((s) => subtaskMark(axis, s)),
    subtaskTotal: run.subtasksPage?.total ?? run.subtasks.length,
    gaps: (coverage?.gaps ?? []).map((gap) => ({
      spans: axis.spans(gap),
      status: gap.status,
      category: gapCategory(gap),
      label: gapLabel(gap),
      where: axis.describe(gap),
      whereInFull: axis.describe(gap, WHOLE_LIST_ITEMS),
      size: axis.size(gap),
      detail: gapDetail(gap),
      subtaskId: gap.subtaskId,
    })),
    missingQuestions: questionMarks(axis, run),
    overlaps: (coverage?.overlaps ?? []).map((o) => ({ spans: axis.spans(o), where: axis.describe(o), subtaskIds: o.subtaskIds })),
    complete: coverage ? coverage.complete : null,
    statement: coverage?.statement,
    progressText: dispatched === 0 ? 'waiting for the first round' : `round ${run.round} · ${terminal}/${dispatched} subtasks ended`,
  };
};
