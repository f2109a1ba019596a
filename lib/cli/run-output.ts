import type { Observed, RunResource, SubtaskView } from '../contract';
import { BAR_LEGEND, coverageBar } from './coverage-bar';
import { printable, table } from './output';

/**
 * One line of live progress.
 *
 * @example
 * progressLine(run) // 'round 2 · 4/5 subtasks ended · ok 4, pending 1'
 */
export const progressLine = (run: RunResource): string => {
  if (run.progress.dispatched === 0) return 'waiting for the first round to be dispatched';
  const states = Object.entries(run.progress.byState)
    .filter(([, count]) => count > 0)
    .map(([state, count]) => `${state} ${count}`)
    .join(', ');
  return printable(`round ${run.round} · ${run.progress.terminal}/${run.progress.dispatched} subtasks ended${states ? ` · ${states}` : ''}`);
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

/**
 * The finished run for people: status, answer, coverage statement and every subtask.
 *
 * @example
 * formatRun(run).split('\n')[0] // 'Run 3f2c… succeeded'
 */
export const formatRun = (run: RunResource): string => {
  const statement = run.answer?.coverage.statement ?? '';
  const text = run.answer?.text ?? '';
  const answer = statement && text.endsWith(statement) ? text.slice(0, -statement.length).trim() : text;
  const lines = [`Run ${run.runId} ${run.status}`];
  if (run.error) lines.push(`Error     ${run.error.code}: ${run.error.message}`);
  if (answer) lines.push(`Answer    ${answer}`);
  if (run.answer && Object.keys(run.answer.result).length > 0) lines.push(`Result    ${JSON.stringify(run.answer.result)}`);
  if (statement) lines.push(`Coverage  ${statement}`);
  lines.push(`Usage     ${run.usage.modelCalls} model calls, estimated cost ${run.usage.estimatedCost} of ${run.budget.costLimit}`);
  // Table cells are escaped by table(); every other line carries stored text, escaped here.
  const rows = table([['id', 'worker', 'round', 'state', 'observed', 'usage', 'note'], ...run.subtasks.map(subtaskRow)]).map((l) => `  ${l}`);
  // A time universe ends with its coverage as one line of glyphs, readable without colour.
  const bar = coverageBar(run);
  const picture = bar === undefined ? [] : [`Timeline  ${bar}`, `          ${BAR_LEGEND}`];
  return [...lines.map(printable), 'Subtasks', ...rows, ...picture].join('\n');
};
