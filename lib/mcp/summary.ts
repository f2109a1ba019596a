import { SETTLED_GAP_STATUSES, type CoverageGap, type FileScope, type RunResource, type RunSummary, type SubtaskView } from '../contract';
import { GET_RUN_MAX_BYTES } from './tools';

/**
 * A run as a model reads it: its coverage first, then the answer, progress and usage, within a
 * stated number of bytes whatever the size of the run. The full run resource of a 1,000-subtask
 * run is hundreds of kilobytes; this is never more than {@link GET_RUN_MAX_BYTES} by default.
 */

/** A region of the universe, short: time as it is, ids and files as the first few and a count. */
export interface CompactRegion {
  readonly from?: string;
  readonly toExclusive?: string;
  readonly ids?: readonly string[];
  readonly files?: readonly string[];
  /** How many ids or files the region has, when `ids` or `files` lists only the first of them. */
  readonly count?: number;
}

/** One gap of the coverage, compact. */
export type CompactGap = CompactRegion & {
  readonly kind: CoverageGap['kind'];
  readonly status: CoverageGap['status'];
  /** True when a re-check against another source settled it (`confirmed_empty`, `data_found`). */
  readonly settled: boolean;
  readonly subtaskId?: string;
  readonly reason?: string;
  readonly recheckedAgainst?: string;
  readonly records?: number;
};

/** The compact run `get_run` and `wait_for_run` answer with. */
export interface CompactRun {
  readonly runId: string;
  readonly status: RunResource['status'];
  /** Null while the run is still running: there is no answer yet. */
  readonly coverage: {
    readonly complete: boolean;
    readonly missingQuestions: readonly string[];
    readonly missingOmitted?: number;
    readonly statement: string;
    readonly gaps: readonly CompactGap[];
    readonly gapsOmitted?: number;
    readonly degradedReason: readonly string[];
    readonly degradedOmitted?: number;
    readonly overlaps: number;
  } | null;
  readonly answer: { readonly text: string; readonly textTruncated?: true; readonly result?: Record<string, unknown>; readonly resultOmitted?: true } | null;
  readonly progress: { readonly ended: number; readonly dispatched: number; readonly round: number; readonly byState: Record<string, number> };
  readonly usage: RunResource['usage'];
  readonly budget: RunResource['budget'];
  readonly goal: string;
  readonly error?: RunResource['error'];
  /** What to do next, in words. */
  readonly next: string;
}

const FIRST = 5;

const fileText = (file: FileScope): string => (file.lines ? `${file.path}#${file.lines.map(([a, b]) => `L${a}-L${b}`).join(',')}` : file.path);

/** A region, with at most `first` ids or files listed. */
export const compactRegion = (
  region: { from?: string; toExclusive?: string; ids?: readonly string[]; files?: readonly FileScope[] },
  first = FIRST,
): CompactRegion => {
  if (region.ids) return { ids: region.ids.slice(0, first), ...(region.ids.length > first ? { count: region.ids.length } : {}) };
  if (region.files) return { files: region.files.slice(0, first).map(fileText), ...(region.files.length > first ? { count: region.files.length } : {}) };
  return { ...(region.from === undefined ? {} : { from: region.from }), ...(region.toExclusive === undefined ? {} : { toExclusive: region.toExclusive }) };
};

const compactGap = (gap: CoverageGap): CompactGap => ({
  ...compactRegion(gap),
  kind: gap.kind,
  status: gap.status,
  settled: SETTLED_GAP_STATUSES.includes(gap.status),
  ...(gap.subtaskId === undefined ? {} : { subtaskId: gap.subtaskId }),
  ...(gap.reason === undefined ? {} : { reason: gap.reason }),
  ...(gap.recheckedAgainst === undefined ? {} : { recheckedAgainst: gap.recheckedAgainst }),
  ...(gap.records === undefined ? {} : { records: gap.records }),
});

/** How many of each list a summary keeps, halved until the summary fits its bound. */
interface Caps {
  readonly gaps: number;
  readonly degraded: number;
  readonly textChars: number;
  readonly resultBytes: number;
}

const START: Caps = { gaps: 20, degraded: 20, textChars: 2000, resultBytes: 1500 };

const nextStep = (run: RunResource): string => {
  if (run.status === 'running') return 'The run is still running: call wait_for_run.';
  if (run.answer === null) return 'The run has ended; its answer is being written: call get_run again in a moment.';
  if (run.answer.coverage.complete) return 'The answer is complete: every part of the universe was read or re-checked.';
  return 'The answer is partial (complete: false): report it as partial, naming missingQuestions and the unsettled gaps, or run those regions again.';
};

const capped = <T>(items: readonly T[], cap: number): { kept: T[]; omitted?: number } =>
  items.length > cap ? { kept: items.slice(0, cap), omitted: items.length - cap } : { kept: [...items] };

const summaryWith = (run: RunResource, caps: Caps): CompactRun => {
  const coverage = run.answer?.coverage;
  const gaps = coverage ? capped(coverage.gaps, caps.gaps) : undefined;
  const degraded = coverage ? capped(coverage.degradedReason, caps.degraded) : undefined;
  const missing = capped(coverage?.missingQuestions ?? [], caps.degraded);
  const text = run.answer?.text ?? '';
  const result = run.answer?.result;
  const resultFits = result !== undefined && JSON.stringify(result).length <= caps.resultBytes;
  return {
    runId: run.runId,
    status: run.status,
    coverage:
      coverage && gaps && degraded
        ? {
            complete: coverage.complete,
            missingQuestions: missing.kept,
            ...(missing.omitted === undefined ? {} : { missingOmitted: missing.omitted }),
            statement: coverage.statement,
            gaps: gaps.kept.map(compactGap),
            ...(gaps.omitted === undefined ? {} : { gapsOmitted: gaps.omitted }),
            degradedReason: degraded.kept,
            ...(degraded.omitted === undefined ? {} : { degradedOmitted: degraded.omitted }),
            overlaps: coverage.overlaps.length,
          }
        : null,
    answer: run.answer
      ? {
          text: text.length > caps.textChars ? `${text.slice(0, caps.textChars)}…` : text,
          ...(text.length > caps.textChars ? { textTruncated: true as const } : {}),
          ...(resultFits ? { result } : { resultOmitted: true as const }),
        }
      : null,
    progress: { ended: run.progress.terminal, dispatched: run.progress.dispatched, round: run.round, byState: run.progress.byState },
    usage: run.usage,
    budget: run.budget,
    goal: run.goal.length > 200 ? `${run.goal.slice(0, 200)}…` : run.goal,
    ...(run.error ? { error: { code: run.error.code, message: run.error.message.slice(0, 300) } } : {}),
    next: nextStep(run),
  };
};

/** The bytes of a value as JSON, as a tool result carries it. */
export const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8');

/**
 * The compact run, within `maxBytes` of JSON: lists and text are cut (and counted) until it fits.
 * The subtasks are never in it (`get_run` pages them on request).
 *
 * @example
 * jsonBytes(compactRun(run)) <= GET_RUN_MAX_BYTES // true for any run
 */
export const compactRun = (run: RunResource, maxBytes = GET_RUN_MAX_BYTES): CompactRun => {
  let caps = START;
  for (;;) {
    const summary = summaryWith(run, caps);
    if (jsonBytes(summary) <= maxBytes || (caps.gaps === 0 && caps.degraded === 0 && caps.textChars === 0)) return summary;
    caps = { gaps: caps.gaps >> 1, degraded: caps.degraded >> 1, textChars: caps.textChars >> 1, resultBytes: caps.resultBytes >> 1 };
  }
};

/** One subtask as a `get_run` page row. */
export interface CompactSubtask {
  readonly id: string;
  readonly worker: string;
  readonly round: number;
  readonly state: SubtaskView['state'];
  readonly assigned: CompactRegion;
  /** What its tools recorded: for time, the first and last record's points (both inclusive). */
  readonly observed?: CompactRegion & { readonly minDate?: string; readonly maxDate?: string; readonly records: number };
  readonly reason?: string;
}

/** A subtask, compact: its assignment and what it observed, short. */
export const compactSubtask = (subtask: SubtaskView): CompactSubtask => {
  const observed = subtask.observed;
  const observedRegion =
    observed === null
      ? undefined
      : 'minDate' in observed
        ? { ...(observed.minDate === null ? {} : { minDate: observed.minDate }), ...(observed.maxDate === null ? {} : { maxDate: observed.maxDate }) }
        : compactRegion(observed, 3);
  return {
    id: subtask.id,
    worker: subtask.worker,
    round: subtask.round,
    state: subtask.state,
    assigned: compactRegion(subtask.assigned, 3),
    ...(observed === null || observedRegion === undefined ? {} : { observed: { ...observedRegion, records: observed.recordCount } }),
    ...(subtask.reason === undefined ? {} : { reason: subtask.reason.slice(0, 120) }),
  };
};

/** One run of a `list_runs` page. */
export const compactRunRow = (run: RunSummary) => ({
  runId: run.runId,
  status: run.status,
  goal: run.goal.length > 120 ? `${run.goal.slice(0, 120)}…` : run.goal,
  createdAt: run.createdAt,
  ended: run.progress.terminal,
  dispatched: run.progress.dispatched,
});
