import type { CoverageGap, CoverageOverlap, Scope, SourceLabel, Universe, UnreadReason } from '../contract';
import { describeRead } from './checkpoint';
import type { ReportedState } from './lineage';
import { describeScope, regionOf } from './dimensions';
import { filePath } from './paths';
import { capitalise, countOf, listWords, numberWord, plural } from './words';

/** A line of work that did not end `ok`, as the statement names it. */
export interface UncoveredWork {
  readonly subtaskId: string;
  readonly worker: string;
  /** Why its region went unread: a terminal state other than `ok`, `source_unreachable` or `missing_outcome`. */
  readonly state: UnreadReason;
  readonly required: boolean;
}

/** The structured facts a statement is rendered from; nothing else goes into it. */
export interface StatementFacts {
  readonly universe: Universe;
  readonly partitions: number;
  readonly overlaps: readonly CoverageOverlap[];
  /**
   * Coverage gaps, with the re-check's own state when the re-check failed, and for an
   * `unconfirmed_empty` gap whether the re-check ran on the kind that left the gap (`sameSource`)
   * and whether it read nothing at all (`readNothing`: it asked no source).
   */
  readonly gaps: ReadonlyArray<CoverageGap & { readonly recheckState?: UnreadReason; readonly sameSource?: boolean; readonly readNothing?: boolean }>;
  readonly uncovered: readonly UncoveredWork[];
  readonly missingQuestions: readonly string[];
  /** Observation problems: data outside assignments, unexpected ids, inconsistent observations. */
  readonly observationProblems: ReadonlyArray<{ readonly subtaskId: string; readonly code: string; readonly region?: Scope }>;
  readonly unexpectedOutcomes: readonly string[];
  /** How to name worker kinds and their records (`transaction feed`, `transactions`). */
  readonly sources?: Readonly<Record<string, SourceLabel>>;
  /** Subtasks won by their `subdivide` hedge's pieces, and each piece's assignment. */
  readonly wonByPieces?: ReadonlyArray<{
    readonly subtaskId: string;
    /** What the original read before it handed the rest over to the pieces, when it did. */
    readonly prefix?: readonly Scope[];
    readonly pieces: ReadonlyArray<{ readonly subtaskId: string; readonly assigned: Scope }>;
  }>;
  /**
   * Attempts that timed out after reading a prefix with partial findings: what they read, the
   * rest, and the attempt the rest was sent to with how it ended (none when it was not sent).
   */
  readonly resumed?: ReadonlyArray<{
    readonly subtaskId: string;
    readonly read: readonly Scope[];
    readonly rest: Scope;
    readonly sentAs?: string;
    readonly sentState?: ReportedState;
  }>;
}

/** Every unread reason in words: a new reason is a compile error here until it has its phrase. */
const STATE_PHRASES: Readonly<Record<UnreadReason, string>> = {
  timed_out: 'timed out',
  invalid: 'returned invalid output',
  empty: 'found no records',
  source_unreachable: 'could not reach its source',
  cancelled: 'was cancelled',
  missing_outcome: 'has no outcome',
};
const statePhrase = (state: UnreadReason): string => STATE_PHRASES[state];

/** A statement stays one readable line: lists show five items, then how many more. */
const SHOWN = 5;
const some = (items: readonly string[], separator: string): string =>
  items.length <= SHOWN ? items.join(separator) : `${items.slice(0, SHOWN).join(separator)}${separator}and ${numberWord(items.length - SHOWN)} more`;

const labelOf = (facts: StatementFacts, kind: string): string => facts.sources?.[kind]?.label ?? kind.replace(/-/g, ' ');
const recordsOf = (facts: StatementFacts, kind: string): string => facts.sources?.[kind]?.recordNoun ?? 'records';

const universeProse = (universe: Universe): string => {
  if (universe.dimension === 'time') return describeScope('time', universe);
  if (universe.dimension === 'ids') return countOf(new Set(universe.ids).size, plural(universe.noun ?? 'id'));
  return countOf(new Set(universe.files.map((f, i) => filePath(f.path, `files.${i}.path`))).size, 'files');
};

const overlapsText = (facts: StatementFacts): string => {
  if (facts.overlaps.length === 0) return 'no overlaps';
  const each = facts.overlaps.map((o) => `${describeScope(facts.universe.dimension, regionOf(o))}: ${listWords(o.subtaskIds)}`);
  return `${countOf(facts.overlaps.length, 'overlaps')} (${some(each, '; ')})`;
};

/**
 * A re-check that returned nothing no other source vouched for: the source that missed the data
 * cannot confirm there was none, and a re-check that read nothing confirms nothing.
 */
const unconfirmedPhrase = (label: string, gap: StatementFacts['gaps'][number]): string => {
  const answer = gap.readNothing ? 'read none of it' : 'returned nothing';
  if (gap.sameSource) return `re-read from the ${label}, which again ${answer}; no other source confirmed it`;
  return `re-checked against the ${label}, which ${answer}; no source confirmed it`;
};

const gapPhrase = (facts: StatementFacts, gap: StatementFacts['gaps'][number]): string => {
  if (gap.kind === 'assignment') return 'assigned to no subtask';
  if (gap.kind === 'unread') return `not read: ${gap.subtaskId ?? 'its subtask'} ${statePhrase(gap.reason ?? 'missing_outcome')}`;
  const kind = gap.recheckedAgainst;
  if (gap.status === 'unchecked' || kind === undefined) return 'not re-checked';
  const against = `against the ${labelOf(facts, kind)}`;
  if (gap.status === 'confirmed_empty') return `re-checked ${against}: ${countOf(0, recordsOf(facts, kind))}`;
  if (gap.status === 'data_found') return `re-checked ${against}: ${countOf(gap.records ?? 0, recordsOf(facts, kind))} found and included`;
  if (gap.status === 'source_unreachable') return `re-checked ${against}: source unreachable`;
  if (gap.status === 'unconfirmed_empty') return unconfirmedPhrase(labelOf(facts, kind), gap);
  return `re-check ${against} ${gap.recheckState === undefined ? 'ended failed' : statePhrase(gap.recheckState)}`;
};

const gapsSentence = (facts: StatementFacts): string | undefined => {
  const each = facts.gaps.map((gap) => ({
    where: describeScope(facts.universe.dimension, regionOf(gap)),
    what: gapPhrase(facts, gap),
  }));
  const [only] = each;
  if (!only) return undefined;
  if (each.length === 1) return `One gap (${only.where}) ${only.what}.`;
  return `${capitalise(numberWord(each.length))} gaps: ${some(
    each.map((g) => `(${g.where}) ${g.what}`),
    '; ',
  )}.`;
};

const piecesSentence = (facts: StatementFacts): string | undefined => {
  const won = facts.wonByPieces ?? [];
  if (won.length === 0) return undefined;
  const dimension = facts.universe.dimension;
  const each = won.map((w) => {
    const pieces = w.pieces.map((p) => `${p.subtaskId} (${describeScope(dimension, p.assigned)})`);
    const prefix = w.prefix === undefined ? [] : [`its own read of ${describeRead(dimension, w.prefix)} before it handed over`];
    return `${w.subtaskId} by ${listWords([...prefix, ...pieces])}`;
  });
  return `Covered by hedge pieces: ${some(each, '; ')}.`;
};

/** `B read 2025-04-01..2025-05-31 before its deadline; 2025-06-01..2025-06-30 was sent again as B.r2 and read.` */
const resumedSentences = (facts: StatementFacts): string[] => {
  const dimension = facts.universe.dimension;
  return (facts.resumed ?? []).map((r) => {
    const rest = describeRead(dimension, [r.rest]);
    const sent =
      r.sentAs === undefined
        ? `${rest} was not read`
        : `${rest} was sent again as ${r.sentAs} and ${r.sentState === 'ok' ? 'read' : statePhrase(r.sentState === undefined ? 'missing_outcome' : r.sentState)}`;
    return `${r.subtaskId} read ${describeRead(dimension, r.read)} before its deadline; ${sent}.`;
  });
};

const uncoveredSentence = (facts: StatementFacts): string | undefined => {
  if (facts.uncovered.length === 0) return undefined;
  const each = facts.uncovered.map((w) => `${w.subtaskId} (${labelOf(facts, w.worker)}${w.required ? ', required' : ''}) ${statePhrase(w.state)}`);
  return `Not covered: ${some(each, '; ')}.`;
};

const OBSERVATION_PHRASES: Readonly<Record<string, string>> = {
  observed_outside_assignment: 'reported data outside its assignment',
  ids_unexpected: 'reported ids it was not assigned',
  inconsistent_observation: 'reported an inconsistent observation',
};

const observationSentence = (facts: StatementFacts): string | undefined => {
  if (facts.observationProblems.length === 0) return undefined;
  const each = facts.observationProblems.map((p) => {
    const where = p.region ? ` (${describeScope(facts.universe.dimension, p.region)})` : '';
    return `${p.subtaskId} ${OBSERVATION_PHRASES[p.code] ?? p.code}${where}`;
  });
  return `Observation problems: ${some(each, '; ')}.`;
};

const questionsSentence = (facts: StatementFacts): string | undefined => {
  const n = facts.missingQuestions.length;
  if (n === 0) return undefined;
  return `${n === 1 ? 'Question' : 'Questions'} ${listWords(facts.missingQuestions)} unanswered.`;
};

const unexpectedSentence = (facts: StatementFacts): string | undefined => {
  if (facts.unexpectedOutcomes.length === 0) return undefined;
  return `Ignored outcomes for ${listWords(facts.unexpectedOutcomes)}, which ${facts.unexpectedOutcomes.length === 1 ? 'was' : 'were'} not dispatched as such.`;
};

/**
 * The one-line coverage statement, in the style of the tax example's answer, rendered only from
 * structured facts. Dates are shown with inclusive ends for people (the JSON stays half-open);
 * small counts are spelled out.
 *
 * @example
 * renderStatement(facts)
 * // 'Coverage: 2025-01-01 to 2025-12-31, four partitions, no overlaps. One gap (2025-06-28 to
 * //  2025-06-30) re-checked against the transaction feed: zero transactions.'
 */
export const renderStatement = (facts: StatementFacts): string => {
  const opening = `Coverage: ${universeProse(facts.universe)}, ${countOf(facts.partitions, 'partitions')}, ${overlapsText(facts)}${facts.gaps.length === 0 ? ', no gaps' : ''}.`;
  const rest = [
    piecesSentence(facts),
    ...resumedSentences(facts),
    gapsSentence(facts),
    uncoveredSentence(facts),
    observationSentence(facts),
    questionsSentence(facts),
    unexpectedSentence(facts),
  ];
  return [opening, ...rest.filter((s): s is string => s !== undefined)].join(' ');
};
