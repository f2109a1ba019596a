import type { GapMark, OverlapMark, Picture, QuestionMark, SubtaskMark } from './geometry';

/**
 * The words shown on hover and focus, and read by screen readers, for each mark of a picture.
 * Pure text, so what a person is told is tested without a browser.
 */

/**
 * @example
 * subtaskText(mark) // 'Subtask B (tax-statements, round 1): ok.\nAssigned: 1 Apr 2025 – 30 Jun 2025.\n…'
 */
export const subtaskText = (s: SubtaskMark): string =>
  [
    `Subtask ${s.id} (${s.worker}, round ${s.round}${s.lineage ? `, ${s.lineage}` : ''}): ${s.stateLabel}.`,
    `Assigned: ${s.assignedText}.`,
    `Observed: ${s.observedText}.`,
    ...(s.checkpointedText ? [`Checkpointed so far: ${s.checkpointedText}.`] : []),
    `Usage: ${s.usageText}.`,
    ...(s.reason ? [`Reason: ${s.reason}.`] : []),
    ...(s.late > 0 ? [`Late evidence: ${s.late} result${s.late === 1 ? '' : 's'} arrived after the subtask was sealed (kept, state unchanged).`] : []),
  ].join('\n');

/** @example gapText(gap) // 'Gap 28 Jun 2025 – 30 Jun 2025: re-checked empty.\n…' */
export const gapText = (g: GapMark): string =>
  [`Gap ${g.where}: ${g.label}.`, ...(g.subtaskId ? [`Subtask: ${g.subtaskId}.`] : []), `${g.detail.charAt(0).toUpperCase()}${g.detail.slice(1)}.`].join('\n');

/** @example overlapText(o) // 'Overlap 1 Mar 2025 – 31 Mar 2025: read by A and B.' */
export const overlapText = (o: OverlapMark): string => `Overlap ${o.where}: read by ${o.subtaskIds.join(' and ')}.`;

/**
 * @example
 * questionText(q) // 'Question q3: unanswered.\nAsked of C (timed out) and C.r2 (timed out).'
 */
export const questionText = (q: QuestionMark): string =>
  [`Question ${q.id}: unanswered.`, q.askedOf.length === 0 ? 'Asked of no subtask shown.' : `Asked of ${andList(q.askedOf)}.`].join('\n');

const andList = (items: readonly string[]): string =>
  items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1] ?? ''}`;

/** The whole picture in one sentence, the accessible name of the drawing. */
export const pictureSummary = (p: Picture): string => {
  const shown = p.gaps.slice(0, 5).map((g) => `${g.where}: ${g.label}`);
  const more = p.gaps.length > shown.length ? `; and ${(p.gaps.length - shown.length).toLocaleString('en-GB')} more` : '';
  const gaps = p.gaps.length === 0 ? 'no gaps' : `${p.gaps.length.toLocaleString('en-GB')} gap${p.gaps.length === 1 ? '' : 's'} (${shown.join('; ')}${more})`;
  const questions = p.missingQuestions.length === 0 ? '' : `; unanswered: ${andList(p.missingQuestions.map((q) => q.id))}`;
  const lanes = p.subtaskTotal > p.subtasks.length ? ` ${lanesNote(p)}` : '';
  return `Coverage of ${p.universeText} by ${count(p.subtaskTotal)}, run ${p.verdictLabel}: ${gaps}${questions}.${lanes}`;
};

const count = (n: number): string => `${n.toLocaleString('en-GB')} subtask${n === 1 ? '' : 's'}`;

/**
 * Said under the lanes of a large run whose resource carried only its first page of subtasks.
 *
 * @example
 * lanesNote(p) // 'Lanes drawn for the first 100 of 1,500 subtasks, in id order.'
 */
export const lanesNote = (p: Picture): string =>
  `Lanes drawn for the first ${p.subtasks.length.toLocaleString('en-GB')} of ${count(p.subtaskTotal)}, in id order.`;
