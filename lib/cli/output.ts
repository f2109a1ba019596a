import { escapeControlCharacters, type Coverage, type CoverageGap, type DispatchedSubtask, type PlanWarning, type Problem, type Universe } from '../contract';
// The scope helpers' own module, not the domain's index: printing a run does not load the planner.
import { describeScope, hasRegion, regionOf } from '../domain/dimensions';
import type { RequestProblem } from '../domain/planner';

/**
 * Stored text as a terminal may show it: control characters (escape sequences, carriage
 * returns, bidirectional overrides) become visible `\u001b`-style escapes. The contract refuses
 * them in requests; this keeps older records and worker-written text harmless too. Every
 * human-readable line the CLI prints goes through it.
 *
 * @example
 * printable('goal \u001b[2J') // 'goal \\u001b[2J'
 */
export const printable = escapeControlCharacters;

/**
 * Pads columns so rows line up; cells are made {@link printable} first.
 *
 * @example
 * table([['A', 'tax-statements'], ['B.g1', 'transaction-feed']]) // ['A     tax-statements', 'B.g1  transaction-feed']
 */
export const table = (rows: readonly (readonly string[])[]): string[] => {
  const cells = rows.map((row) => row.map(printable));
  const widths = cells.reduce<number[]>((w, row) => row.map((cell, i) => Math.max(w[i] ?? 0, cell.length)), []);
  return cells.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  '));
};

const indent = (lines: readonly string[]): string[] => lines.map((line) => `  ${line}`);

const subtaskRow = (universe: Universe, subtask: DispatchedSubtask): string[] => [
  subtask.id,
  subtask.worker,
  describeScope(universe.dimension, subtask.assigned, 'exact'),
  subtask.required ? 'required' : 'optional',
  subtask.deadlineSeconds === undefined ? '' : `${subtask.deadlineSeconds}s`,
  subtask.questionIds.join(','),
];

/**
 * The generated tiling for people: one row per subtask.
 *
 * @example
 * formatPlan(universe, subtasks)
 * // 'Plan: 4 subtasks tile 2025-01-01 to 2025-12-31\n  A  tax-statements  2025-01-01..2025-04-01  required  60s  q1\n…'
 */
export const formatPlan = (universe: Universe, subtasks: readonly DispatchedSubtask[]): string => {
  const header = `Plan: ${subtasks.length} subtask${subtasks.length === 1 ? '' : 's'} tile ${describeScope(universe.dimension, universe)}`;
  return [printable(header), ...indent(table(subtasks.map((s) => subtaskRow(universe, s))))].join('\n');
};

/**
 * Every problem, one per row: where, what, and the precise message.
 *
 * @example
 * formatProblems('The plan was rejected', problems)
 */
export const formatProblems = (title: string, problems: readonly (Problem | RequestProblem)[]): string =>
  [
    printable(`${title} (${problems.length} problem${problems.length === 1 ? '' : 's'}):`),
    ...indent(table(problems.map((p) => [p.path ?? '', p.code, p.message]))),
  ].join('\n');

/**
 * The planner's warnings, one line each: what to change, and why.
 *
 * @example
 * formatWarnings([{ code: 'capacity_short', worker: 'ticket-triage', path: 'split.deadlineSeconds', message: '200 ticket-triage subtasks, …' }])
 * // ['warning (capacity_short) split.deadlineSeconds: 200 ticket-triage subtasks, …']
 */
export const formatWarnings = (warnings: readonly PlanWarning[]): string[] => warnings.map((w) => printable(`warning (${w.code}) ${w.path}: ${w.message}`));

const gapRow = (dimension: Universe['dimension'], gap: CoverageGap): string[] => {
  const region = hasRegion(gap) ? describeScope(dimension, regionOf(gap), 'exact') : '';
  const origin =
    gap.kind === 'observed'
      ? `observed by ${gap.subtaskId ?? '?'}`
      : gap.kind === 'unread'
        ? `not read by ${gap.subtaskId ?? '?'} (${gap.reason ?? '?'})`
        : 'unassigned';
  const recheck = gap.recheckSubtaskId ? `${gap.recheckSubtaskId} against ${gap.recheckedAgainst ?? '?'}` : '';
  const records = gap.records === undefined ? '' : `${gap.records} records`;
  return [region, origin, gap.status, recheck, records];
};

/**
 * One gap on one line: where it is, who left it, and its status with the re-check that set it.
 *
 * @example
 * gapLine('ids', unconfirmed) // 'T-017, T-018, T-019  observed by A, unconfirmed_empty (A.g1 against helpdesk)'
 */
export const gapLine = (dimension: Universe['dimension'], gap: CoverageGap): string => {
  const [region, origin, status, recheck] = gapRow(dimension, gap);
  return printable(`${region ? `${region}  ` : ''}${origin}, ${status}${recheck ? ` (${recheck})` : ''}`);
};

/**
 * A coverage report for people: the statement first, then the structured fields behind it.
 *
 * @example
 * formatCoverage(universe, coverage)
 * // 'Coverage: 2025-01-01 to 2025-12-31, four partitions, no overlaps. …\n\ncomplete: yes\n…'
 */
export const formatCoverage = (universe: Universe, coverage: Coverage): string => {
  const lines = [
    printable(coverage.statement),
    '',
    `complete: ${coverage.complete ? 'yes' : 'no'}`,
    `partitions: ${coverage.partitions}`,
    printable(`missing questions: ${coverage.missingQuestions.join(', ') || 'none'}`),
    printable(`degraded: ${coverage.degradedReason.join(', ') || 'none'}`),
  ];
  if (coverage.overlaps.length > 0) {
    lines.push('overlaps:', ...indent(table(coverage.overlaps.map((o) => [describeScope(universe.dimension, regionOf(o), 'exact'), o.subtaskIds.join(', ')]))));
  }
  if (coverage.gaps.length > 0) lines.push('gaps:', ...indent(table(coverage.gaps.map((g) => gapRow(universe.dimension, g)))));
  if (coverage.problems.length > 0) lines.push(formatProblems('reconcile found', coverage.problems));
  return lines.join('\n');
};
