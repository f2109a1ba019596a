import type { Coverage, Manifest } from '../contract';
import { chainReason, gapReason, isResolved, PLAN_PROBLEM_CODES, planReason, resolveGaps } from './coverage';
import { uniqueReasons, type DegradedReason } from './degraded';
import { RequiredGapError } from './errors';
import type { Reconciliation } from './reconcile';
import { policyOf } from './follow-up';

/** How a run ends, by its coverage policy. A failed run still reports its coverage. */
export type StatusDecision = { readonly status: 'succeeded'; readonly degraded: boolean } | { readonly status: 'failed'; readonly error: RequiredGapError };

/**
 * Required lines of work that are not covered: a required subtask whose latest attempt is not
 * ok, a required subtask's observed gap that no re-check resolved, and any plan problem
 * (a universe that is not tiled has a part nobody was responsible for).
 *
 * @example
 * unmetRequirements(manifest, reconciliation) // [{ who: 'C.r2', why: 'timed_out' }, { who: 'B.g1', why: 'source_unreachable' }]
 */
export const unmetRequirements = (manifest: Manifest, reconciliation: Reconciliation): DegradedReason[] => {
  const required = new Set(manifest.subtasks.filter((s) => s.required).map((s) => s.id));
  const plan = reconciliation.problems.filter((p) => PLAN_PROBLEM_CODES.has(p.code)).map(planReason);
  const work = reconciliation.chains.partitions.filter((c) => c.origin.required && c.state !== 'ok').map(chainReason);
  const gaps = resolveGaps(reconciliation)
    .filter((g) => required.has(g.gap.subtaskId) && !isResolved(g))
    .map(gapReason);
  return uniqueReasons([...plan, ...work, ...gaps]);
};

/**
 * Applies the coverage policy (the Scout example): with `onRequiredGap: "fail"` an unmet requirement
 * fails the run with a `RequiredGapError` that carries the coverage; with `"degrade"`, and for
 * optional gaps always, the run succeeds with `coverage.complete: false`. A plan that does not
 * tile fails whatever the policy says, because nobody was responsible for the missing part.
 *
 * @example
 * const decision = decideStatus(manifest, coverage, reconciliation);
 * if (decision.status === 'failed') ledger.finishRun('failed', { ...answer, coverage: decision.error.coverage });
 */
export const decideStatus = (manifest: Manifest, coverage: Coverage, reconciliation: Reconciliation): StatusDecision => {
  const unmet = unmetRequirements(manifest, reconciliation);
  const planBroken = reconciliation.problems.some((p) => PLAN_PROBLEM_CODES.has(p.code));
  if (planBroken || (unmet.length > 0 && policyOf(manifest).onRequiredGap === 'fail')) {
    return { status: 'failed', error: new RequiredGapError(coverage, unmet) };
  }
  return { status: 'succeeded', degraded: !coverage.complete };
};
