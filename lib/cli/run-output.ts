import { LiveState, SETTLED_GAP_STATUSES, type Observed, type RunResource, type SubtaskView } from '../contract';
import { describeRead } from '../domain/checkpoint';
import { BAR_LEGEND, coverageBar } from './coverage-bar';
import { gapLine, printable, table } from './output';

/**
 * What a subtask that has not ended has checkpointed so far (live coverage), or nothing: its id,
 * the region its tools have answered and the records they returned.
 *
 * @example
 * checkpointedText('time', runningB) // 'B 2025-04-01..2025-05-31 (12 records)'
 */
export const checkpointedText = (dimension: RunResource['universe']['dimension'], s: SubtaskView): string | undefined => {
  if (!LiveState.safeParse(s.state).success || s.checkpoint === undefined || s.checkpoint.covered.length === 0) return undefined;
  const records = s.checkpoint.observed.recordCount;
  return `${s.id} ${describeRead(dimension, s.checkpoint.covered)} (${records} record${records === 1 ? '' : 's'})`;
};

/**
 * One line of live progress; the subtasks still running that have checkpointed say how far they got.
 *
 * @example
 * progressLine(run) // 'round 2 · 4/5 subtasks ended · ok 4, running 1 · checkpointed B 2025-04-01..2025-05-31 (12 records)'
 */
export const progressLine = (run: RunResource): string => {
  if (run.progress.dispatched === 0) return 'waiting for the first round to be dispatched';
  const states = Object.entries(run.progress.byState)
    .filter(([, count]) => count > 0)
    .map(([state, count]) => `${state} ${count}`)
    .join(', ');
  const checkpointed = run.subtasks.flatMap((s) => checkpointedText(run.universe.dimension, s) ?? []).join(', ');
  return printable(
    `round ${run.round} · ${run.progress.terminal}/${run.progress.dispatched} subtasks ended${states ? ` · ${states}` : ''}` +
      (checkpointed ? ` · checkpointed ${checkpointed}` : ''),
  );
};

const observedText = (observed: Observed | null): string => {
  if (observed === null) return '-';
  if ('minDate' in observed) return observed.recordCount === 0 ? 'no records' : `${observed.minDate}..${observed.maxDate} (${observed.recordCount})`;
  if ('ids' in observed) return `${observed.ids.length} id${observed.ids.length === 1 ? '' : 's'} (${observed.recordCount})`;
  return `${observed.files.length} file${observed.files.length === 1 ? '' : 's'} (${observed.recordCount})`;
};

const subtaskRow = (s: SubtaskView): string[] => [
  s.id,
  s.worker,
  `r${s.round}`,
  s.state,
  observedText(s.observed),
  `${s.usage.modelCalls} call${s.usage.modelCalls === 1 ? '' : 's'}/${s.usage.estimatedCost}`,
  [s.reason, s.late?.length ? `late result kept (${s.late.length})` : undefined].filter(Boolean).join('; '),
];

/** Unsettled gaps shown one per line; a run of 100,000 ids can have more, which are counted. */
const SHOWN_GAPS = 10;

/** A question of the request, as `tessera run` read it from the file. */
export interface RequestQuestion {
  readonly id: string;
  readonly text?: string | undefined;
}

/**
 * How the run ended, for its first line: a run that succeeded with an incomplete answer says so,
 * so nobody mistakes it for a whole answer.
 *
 * @example
 * runOutcome(scoutRun) // 'succeeded, incomplete'
 */
export const runOutcome = (run: RunResource): string =>
  run.status === 'succeeded' && run.answer?.coverage.complete === false ? 'succeeded, incomplete' : run.status;

/** `Missing` and `Unsettled` lines: what an incomplete answer lacks, before anything else is read. */
const incompleteLines = (run: RunResource, questions: readonly RequestQuestion[]): string[] => {
  const coverage = run.answer?.coverage;
  if (!coverage || coverage.complete) return [];
  const text = new Map(questions.map((q) => [q.id, q.text]));
  const missing = coverage.missingQuestions.map((id) => (text.get(id) ? `${id} (${text.get(id)})` : id));
  const unsettled = coverage.gaps.filter((gap) => !SETTLED_GAP_STATUSES.includes(gap.status)).map((gap) => gapLine(run.universe.dimension, gap));
  const shown = unsettled.length > SHOWN_GAPS ? [...unsettled.slice(0, SHOWN_GAPS), `… and ${unsettled.length - SHOWN_GAPS} more`] : unsettled;
  const block = (label: string, items: readonly string[]) => items.map((item, i) => `${i === 0 ? label.padEnd(10) : ' '.repeat(10)}${item}`);
  return [...block('Missing', missing), ...block('Unsettled', shown)];
};

/**
 * `Claims` and `Audit` lines of an answer with a synthesis: each claim with the finding ids it
 * cites (`[A#1 E#1]`), then the audit, clean or its problems, and why it fell back to the merge.
 */
const synthesisLines = (run: RunResource): string[] => {
  const synthesis = run.answer?.synthesis;
  if (!synthesis) return [];
  const claims = synthesis.claims.map((claim, i) => {
    const cites = claim.kind === 'gap' ? `gap: ${(claim.questionIds ?? []).join(' ')}` : claim.cites.join(' ') || 'no citation';
    return `${i === 0 ? 'Claims'.padEnd(10) : ' '.repeat(10)}${i + 1}. ${claim.text} [${cites}]`;
  });
  const { audit } = synthesis;
  const counts = `${audit.findings} findings, ${audit.cited} cited, ${audit.setAside} set aside`;
  const verdict = audit.clean
    ? [`Audit     clean (${counts})`]
    : [`Audit     ${audit.problems.length} problem(s) (${counts})`, ...audit.problems.map((p) => `          ${p.code}: ${p.message}`)];
  const fellBack = synthesis.fallback ? [`Fallback  the merge answers (${synthesis.fallback.reason}): ${synthesis.fallback.message}`] : [];
  return [...claims, ...verdict, ...fellBack];
};

/**
 * The finished run for people: status (`succeeded, incomplete` when the answer is not complete,
 * then the missing questions and the unsettled gaps), answer, coverage statement and every subtask.
 * `questions` are the request's, to name each missing question by its text.
 *
 * @example
 * formatRun(run).split('\n')[0] // 'Run 3f2c… succeeded'
 */
export const formatRun = (run: RunResource, questions: readonly RequestQuestion[] = []): string => {
  const statement = run.answer?.coverage.statement ?? '';
  const text = run.answer?.text ?? '';
  const answer = statement && text.endsWith(statement) ? text.slice(0, -statement.length).trim() : text;
  const lines = [`Run ${run.runId} ${runOutcome(run)}`, ...incompleteLines(run, questions)];
  if (run.error) lines.push(`Error     ${run.error.code}: ${run.error.message}`);
  if (answer) lines.push(`Answer    ${answer}`);
  if (run.answer && Object.keys(run.answer.result).length > 0) lines.push(`Result    ${JSON.stringify(run.answer.result)}`);
  lines.push(...synthesisLines(run));
  if (statement) lines.push(`Coverage  ${statement}`);
  lines.push(`Usage     ${run.usage.modelCalls} model calls, estimated cost ${run.usage.estimatedCost} of ${run.budget.costLimit}`);
  // Table cells are escaped by table(); every other line carries stored text, escaped here.
  const rows = table([['id', 'worker', 'round', 'state', 'observed', 'usage', 'note'], ...run.subtasks.map(subtaskRow)]).map((l) => `  ${l}`);
  // A time universe ends with its coverage as one line of glyphs, readable without colour.
  const bar = coverageBar(run);
  const picture = bar === undefined ? [] : [`Timeline  ${bar}`, `          ${BAR_LEGEND}`];
  return [...lines.map(printable), 'Subtasks', ...rows, ...picture].join('\n');
};
