import {
  SETTLED_GAP_STATUSES,
  type Coverage,
  type CoverageGap,
  type CoverageOverlap,
  type DispatchedSubtask,
  type Manifest,
  type Outcome,
  type Problem,
  type ProblemCode,
  type Scope,
} from '../contract';
import { prefixRegion, type CountedPrefix } from './checkpoint';
import { algebraFor, hasRegion, regionOf } from './dimensions';
import { DimensionMismatchError, ScopeError } from './errors';
import { degradedReasonText, uniqueReasons, type DegradedReason } from './degraded';
import { recheckId, reportedState, unreadReason, type AttemptChain } from './lineage';
import { reconcile, type ObservedGap, type Reconciliation } from './reconcile';
import { renderStatement, type StatementFacts, type UncoveredWork } from './statement';

/** Problems that mean the plan itself does not tile the universe. */
export const PLAN_PROBLEM_CODES: ReadonlySet<ProblemCode> = new Set([
  'assignment_gap',
  'assignment_overlap',
  'scope_outside_universe',
  'dimension_mismatch',
  'duplicate_universe_id',
  'duplicate_subtask_id',
]);

/** Problems with what a worker reported about its data, other than gaps to re-check. */
export const OBSERVATION_PROBLEM_CODES: ReadonlySet<ProblemCode> = new Set(['observed_outside_assignment', 'ids_unexpected', 'inconsistent_observation']);

/** Gap states that leave nothing to doubt: confirmed empty by another source, or data found and folded in. */
const RESOLVED: ReadonlySet<string> = new Set(SETTLED_GAP_STATUSES);

/** One observed gap with what its re-check (if any) concluded. */
export interface ResolvedGap {
  readonly gap: ObservedGap;
  readonly coverage: CoverageGap;
  /** The re-check's line of work, when one was dispatched. */
  readonly recheck?: AttemptChain;
}

/**
 * What a re-check concluded about its gap. The rule that makes a re-check evidence: only a source
 * other than the one that missed the data can vouch that there was none. Data a re-check found is
 * read data, whichever kind read it (`data_found`); an empty answer confirms the gap only when it
 * came from another kind with a source reached (`confirmed_empty`). The same kind answering empty
 * again, or a re-check that asked no source and read nothing, leaves the gap `unconfirmed_empty`.
 */
const resolution = (gap: ObservedGap, chain: AttemptChain | undefined): Pick<CoverageGap, 'status' | 'recheckedAgainst' | 'recheckSubtaskId' | 'records'> => {
  if (!chain) return { status: 'unchecked' };
  const base = { recheckedAgainst: chain.origin.worker, recheckSubtaskId: chain.latest.id };
  const records = chain.outcome?.observed?.recordCount ?? 0;
  if (chain.state === 'ok') return records > 0 ? { ...base, status: 'data_found', records } : { ...base, status: 'unconfirmed_empty', records: 0 };
  if (chain.state !== 'empty') return { ...base, status: 'recheck_failed' };
  if ((chain.outcome?.sourcesReached ?? 0) === 0) return { ...base, status: 'source_unreachable' };
  return { ...base, status: chain.origin.worker === gap.worker ? 'unconfirmed_empty' : 'confirmed_empty', records: 0 };
};

/**
 * Each observed gap with the outcome of its re-check (`<subtaskId>.g<n>` and its retries):
 * `data_found` (re-check `ok` with records), `confirmed_empty` (`empty` with a source reached, from
 * a kind other than the one that left the gap), `unconfirmed_empty` (`empty` from that same kind,
 * or `ok` having read nothing), `source_unreachable` (`empty`, none reached), `recheck_failed`
 * (anything else) or `unchecked` (no re-check dispatched).
 *
 * @example
 * resolveGaps(reconcile(manifest, outcomes))[0].coverage.status // 'confirmed_empty'
 */
export const resolveGaps = (reconciliation: Reconciliation): ResolvedGap[] => {
  const rechecks = new Map(reconciliation.chains.rechecks.map((chain) => [chain.origin.id, chain]));
  return reconciliation.observedGaps.map((gap) => {
    const id = recheckId(gap.subtaskId, gap.number);
    const recheck = rechecks.get(id);
    const status = resolution(gap, recheck);
    const coverage: CoverageGap = { ...gap.region, kind: 'observed', subtaskId: gap.subtaskId, ...status };
    return recheck ? { gap, coverage, recheck } : { gap, coverage };
  });
};

const sortedUnique = (values: Iterable<string>): string[] => [...new Set(values)].sort();

/** Question ids of lines of work that did not end ok, plus declared questions nobody was given. */
const missingQuestionsOf = (manifest: Manifest, reconciliation: Reconciliation): string[] => {
  const { partitions } = reconciliation.chains;
  const assigned = new Set(partitions.flatMap((c) => c.origin.questionIds));
  const unassigned = (manifest.questions ?? []).map((q) => q.id).filter((id) => !assigned.has(id));
  const failed = partitions.filter((c) => c.state !== 'ok').flatMap((c) => c.origin.questionIds);
  return sortedUnique([...failed, ...unassigned]);
};

/**
 * Who a plan problem is about, and what.
 *
 * @example
 * planReason({ code: 'assignment_overlap', message: '…', subtaskIds: ['A', 'B'] }) // { who: 'A+B', why: 'assignment_overlap' }
 */
export const planReason = (problem: Problem): DegradedReason => {
  const ids = problem.subtaskIds ?? [];
  const who = problem.code === 'assignment_gap' || ids.length === 0 ? 'universe' : ids.join('+');
  return { who, why: problem.code };
};

/** A line of work that did not end `ok`: its latest attempt, and how that attempt ended. */
export const chainReason = (chain: AttemptChain): DegradedReason => ({ who: chain.latest.id, why: reportedState(chain) });

/**
 * Why a gap is unresolved: the gap's subtask and code when never re-checked, else the failed re-check.
 *
 * @example
 * gapReason(unchecked)   // { who: 'B', why: 'observed_ends_early' }
 * gapReason(timedOut)    // { who: 'B.g1', why: 'timed_out' }
 * gapReason(sameSource)  // { who: 'H.g1', why: 'unconfirmed_empty' } (the helpdesk re-read itself and again found nothing)
 */
export const gapReason = (gap: ResolvedGap): DegradedReason => {
  if (!gap.recheck) return { who: gap.gap.subtaskId, why: gap.gap.code };
  // An empty answer nobody else confirmed is not an ended-empty line of work: say what it is.
  return { who: gap.recheck.latest.id, why: gap.coverage.status === 'unconfirmed_empty' ? 'unconfirmed_empty' : reportedState(gap.recheck) };
};

/**
 * True when a re-check settled the gap: confirmed empty, or data found and folded in.
 *
 * @example
 * resolveGaps(reconciliation).every(isResolved) // no gap left in doubt
 */
export const isResolved = (gap: ResolvedGap): boolean => RESOLVED.has(gap.coverage.status);

/**
 * Everything that keeps coverage from being complete, in a stable order: plan problems, lines of
 * work not ok (latest attempt), gaps left unresolved (the gap's subtask when never re-checked,
 * else the failed re-check), observation problems, and outcomes that match no dispatched subtask.
 */
const degradedReasonsOf = (reconciliation: Reconciliation, gaps: readonly ResolvedGap[]): DegradedReason[] => {
  const { problems, chains } = reconciliation;
  const first = (p: Problem): DegradedReason => ({ who: p.subtaskIds?.[0] ?? 'unknown', why: p.code });
  return uniqueReasons([
    ...problems.filter((p) => PLAN_PROBLEM_CODES.has(p.code)).map(planReason),
    ...chains.partitions.filter((c) => c.state !== 'ok').map(chainReason),
    ...problems.filter((p) => p.code === 'missing_outcome').map(first),
    ...gaps.filter((g) => !isResolved(g)).map(gapReason),
    ...problems.filter((p) => OBSERVATION_PROBLEM_CODES.has(p.code)).map(first),
    ...problems.filter((p) => p.code === 'unexpected_outcome').map(first),
  ]);
};

const overlapsOf = (problems: readonly Problem[]): CoverageOverlap[] =>
  problems.filter((p) => p.code === 'assignment_overlap').map((p) => ({ ...regionOf(p), subtaskIds: p.subtaskIds ?? [] }));

const assignmentGapsOf = (problems: readonly Problem[]): CoverageGap[] =>
  problems.filter((p) => p.code === 'assignment_gap' && hasRegion(p)).map((p) => ({ ...regionOf(p), kind: 'assignment', status: 'unchecked' }));

/**
 * The assigned regions nobody read: one `unread` gap per region of the universe whose first-round
 * line of work did not end `ok` (its latest attempt timed out, was invalid, found nothing, was
 * cancelled, could not reach its source, or has no outcome), clipped to the universe. A scope
 * of another dimension is a plan problem already and has no region to report.
 *
 * @example
 * unreadGapsOf(manifest, reconciliation)
 * // [{ ids: ['crm-acme'], kind: 'unread', subtaskId: 'C.r2', reason: 'timed_out', status: 'unchecked' }]
 */
export const unreadGapsOf = (manifest: Manifest, reconciliation: Reconciliation): CoverageGap[] => {
  const algebra = algebraFor(manifest.universe.dimension);
  const unread = reconciliation.chains.partitions.filter((c) => c.state !== 'ok');
  if (unread.length === 0) return [];
  const universe = algebra.normalise(manifest.universe);
  const insideUniverse = (assigned: Scope): Scope[] => {
    try {
      return algebra.toScopes(algebra.intersect(universe, algebra.normalise(assigned)));
    } catch (error) {
      if (error instanceof DimensionMismatchError || error instanceof ScopeError) return [];
      throw error;
    }
  };
  return unread.flatMap((chain) => {
    const reason = unreadReason(chain);
    if (reason === undefined) return [];
    // A prefix read before a deadline, with its partial findings, is read: only the rest is unread.
    const resumed = reconciliation.resumed.get(chain.origin.id);
    const unreadScopes =
      resumed === undefined
        ? [chain.origin.assigned]
        : unreadOf(manifest.universe.dimension, chain.origin.assigned, prefixRegion(manifest.universe.dimension, resumed));
    return unreadScopes.flatMap(insideUniverse).map((scope): CoverageGap => ({
      ...scope,
      kind: 'unread',
      subtaskId: chain.latest.id,
      reason,
      status: 'unchecked',
    }));
  });
};

/** What of `assigned` the prefixes did not read. */
const unreadOf = (dimension: Manifest['universe']['dimension'], assigned: Scope, prefix: readonly Scope[]): Scope[] => {
  const algebra = algebraFor(dimension);
  const whole = algebra.normalise(assigned);
  return algebra.toScopes(prefix.reduce((acc, scope) => algebra.difference(acc, algebra.normalise(scope)), whole));
};

/** Each counted prefix as the statement tells it: what was read before the deadline, and where the rest went. */
const resumedFacts = (reconciliation: Reconciliation): NonNullable<StatementFacts['resumed']> => {
  const chains = new Map([...reconciliation.chains.partitions, ...reconciliation.chains.rechecks].map((c) => [c.origin.id, c]));
  return [...reconciliation.resumed.values()].flatMap((line) => {
    const chain = chains.get(line.origin.id);
    // A prefix handed over to hedge pieces is told with the pieces (`wonByPieces`).
    if (chain === undefined || line.handedOver === true) return [];
    return line.prefixes.map((p) => {
      const position = chain.attempts.findIndex((a) => a.id === p.attempt.id);
      const next = chain.attempts[position + 1];
      const nextState = next === undefined ? undefined : next.id === chain.latest.id ? reportedState(chain) : 'timed_out';
      return {
        subtaskId: p.attempt.id,
        read: p.prefix,
        rest: next?.assigned ?? line.unsent ?? p.attempt.assigned,
        ...(next === undefined || nextState === undefined ? {} : { sentAs: next.id, sentState: nextState }),
      };
    });
  });
};

const uncoveredOf = (chains: readonly AttemptChain[]): UncoveredWork[] =>
  chains.flatMap((c): UncoveredWork[] => {
    const state = unreadReason(c);
    return state === undefined ? [] : [{ subtaskId: c.latest.id, worker: c.latest.worker, state, required: c.origin.required }];
  });

const observationProblemsOf = (problems: readonly Problem[]): StatementFacts['observationProblems'] =>
  problems
    .filter((p) => OBSERVATION_PROBLEM_CODES.has(p.code))
    .map((p) => ({ subtaskId: p.subtaskIds?.[0] ?? 'unknown', code: p.code, ...(hasRegion(p) ? { region: regionOf(p) } : {}) }));

const wonByPiecesOf = (reconciliation: Reconciliation): NonNullable<StatementFacts['wonByPieces']> =>
  [...reconciliation.pieces].map(([subtaskId, pieces]) => {
    const handover = reconciliation.resumed.get(subtaskId);
    return {
      subtaskId,
      ...(handover?.handedOver === true ? { prefix: handover.prefixes.flatMap((p) => p.prefix) } : {}),
      pieces: pieces.map((p) => ({ subtaskId: p.subtask.id, assigned: p.subtask.assigned })),
    };
  });

/** A gap as the statement is told it: how a failed re-check ended, whose re-check an unconfirmed one was. */
const gapFacts = (g: ResolvedGap): StatementFacts['gaps'][number] => {
  if (!g.recheck) return g.coverage;
  if (g.coverage.status === 'recheck_failed') {
    const recheckState = unreadReason(g.recheck);
    return recheckState === undefined ? g.coverage : { ...g.coverage, recheckState };
  }
  if (g.coverage.status !== 'unconfirmed_empty') return g.coverage;
  return { ...g.coverage, sameSource: g.recheck.origin.worker === g.gap.worker, readNothing: g.recheck.state === 'ok' };
};

/**
 * The coverage of an answer, computed only from the manifest and the outcomes (never from
 * model text). `gaps` lists every region of the universe without `ok` data: unassigned
 * (`assignment`), assigned but never read (`unread`), and read short (`observed`, with what
 * its re-check found). `complete` is true exactly when no gap is left unsettled, nothing is
 * degraded and no question is unanswered: the plan tiles, every line of work ended ok, every
 * observed gap was re-checked and confirmed empty or found data, and no worker reported data
 * it was not given.
 *
 * @example
 * buildCoverage(taxManifest, outcomes).statement
 * // 'Coverage: 2025-01-01 to 2025-12-31, four partitions, no overlaps. One gap (2025-06-28 to
 * //  2025-06-30) re-checked against the transaction feed: zero transactions.'
 */
export const buildCoverage = (manifest: Manifest, outcomes: readonly Outcome[], reconciliation: Reconciliation = reconcile(manifest, outcomes)): Coverage =>
  assessCoverage(manifest, outcomes, reconciliation).coverage;

/** The coverage of an answer, and its degraded reasons as the typed objects its wire strings are written from. */
export interface CoverageAssessment {
  readonly coverage: Coverage;
  readonly degraded: readonly DegradedReason[];
}

/**
 * {@link buildCoverage}, with the degraded reasons typed beside it (`coverage.degradedReason`
 * holds their wire form): what reads a reason's parts, such as a metric per reason, reads them here.
 *
 * @example
 * assessCoverage(scoutManifest, outcomes).degraded // [{ who: 'C.r2', why: 'timed_out' }]
 */
export const assessCoverage = (
  manifest: Manifest,
  outcomes: readonly Outcome[],
  reconciliation: Reconciliation = reconcile(manifest, outcomes),
): CoverageAssessment => {
  const { problems, chains } = reconciliation;
  const resolved = resolveGaps(reconciliation);
  const missingQuestions = missingQuestionsOf(manifest, reconciliation);
  const degraded = degradedReasonsOf(reconciliation, resolved);
  const overlaps = overlapsOf(problems);
  const assignmentGaps = assignmentGapsOf(problems);
  const unreadGaps = unreadGapsOf(manifest, reconciliation);
  const facts: StatementFacts = {
    universe: manifest.universe,
    partitions: chains.partitions.length,
    overlaps,
    gaps: [...assignmentGaps, ...resolved.map(gapFacts), ...unreadGaps],
    uncovered: uncoveredOf(chains.partitions),
    missingQuestions,
    observationProblems: observationProblemsOf(problems),
    unexpectedOutcomes: sortedUnique(problems.filter((p) => p.code === 'unexpected_outcome').flatMap((p) => p.subtaskIds ?? [])),
    ...(manifest.sources ? { sources: manifest.sources } : {}),
    ...(reconciliation.pieces.size === 0 ? {} : { wonByPieces: wonByPiecesOf(reconciliation) }),
    ...(reconciliation.resumed.size === 0 ? {} : { resumed: resumedFacts(reconciliation) }),
  };
  const gaps = [...assignmentGaps, ...resolved.map((g) => g.coverage), ...unreadGaps];
  const unsettled = gaps.some((gap) => !RESOLVED.has(gap.status));
  const coverage: Coverage = {
    complete: !unsettled && degraded.length === 0 && missingQuestions.length === 0,
    missingQuestions,
    degradedReason: degraded.map(degradedReasonText),
    partitions: chains.partitions.length,
    overlaps,
    gaps,
    problems,
    statement: renderStatement(facts),
  };
  return { coverage, degraded };
};

/** The subtask and outcome of each `ok` line of work, for synthesis. */
export interface SynthesisInput {
  readonly subtask: DispatchedSubtask;
  readonly outcome: Outcome;
}

/**
 * What synthesis may read: the latest attempt of every first-round line of work that ended
 * `ok`, and every re-check that found data (folded into the answer). Never a `timed_out`,
 * `invalid`, `empty` or `cancelled` outcome, except for the prefix a timed-out attempt read
 * before its deadline with partial findings (reconcile counted it: its retry was sent only the
 * rest), read as those findings over that prefix. A subtask won by its `subdivide` pieces is
 * read as its `ok` pieces, whose findings are the subtask's (it has none of its own).
 *
 * @example
 * synthesisInputs(reconcile(manifest, outcomes)).map((i) => i.subtask.id) // ['A', 'B', 'D', 'B.g1']
 * // B timed out after April and May, B.r2 read June: ['A', 'B', 'B.r2', 'C', 'D'], B as its prefix's findings
 */
export const synthesisInputs = (reconciliation: Reconciliation): SynthesisInput[] =>
  [...reconciliation.chains.partitions, ...reconciliation.chains.rechecks].flatMap((chain): SynthesisInput[] => {
    const prefixes = (reconciliation.resumed.get(chain.origin.id)?.prefixes ?? []).map(prefixInput);
    if (chain.state !== 'ok' || !chain.outcome) return prefixes;
    const pieces = reconciliation.pieces.get(chain.latest.id);
    return [...prefixes, ...(pieces === undefined ? [{ subtask: chain.latest, outcome: chain.outcome }] : pieces)];
  });

/** A counted prefix as synthesis reads it: its attempt over the prefix, with the partial findings and the records they rest on. */
const prefixInput = (prefix: CountedPrefix): SynthesisInput => {
  const [assigned = prefix.attempt.assigned] = prefix.prefix;
  return {
    subtask: { ...prefix.attempt, assigned },
    outcome: {
      subtaskId: prefix.attempt.id,
      state: 'ok',
      observed: prefix.observed,
      sources: [],
      sourcesReached: 0,
      findings: prefix.findings,
      usage: { modelCalls: 0, estimatedCost: 0 },
      refusals: [],
    },
  };
};
