import { Policy, type DispatchedSubtask, type Manifest, type Outcome } from '../contract';
import { recheckId, retryId, type AttemptChain } from './lineage';
import { reconcile, type ObservedGap, type Reconciliation } from './reconcile';

/**
 * The manifest's policy with the contract defaults filled in (the Scout example: retry `timed_out` and
 * `invalid` once, never `empty`; fail on a required gap; two rounds).
 *
 * @example
 * policyOf({ ...manifest, policy: undefined }).retry // { timed_out: 1, invalid: 1, empty: 0 }
 */
export const policyOf = (manifest: Manifest): Policy => manifest.policy ?? Policy.parse({});

/**
 * The last round dispatched so far.
 *
 * @example
 * currentRound(manifest) // 2 once B.g1 was dispatched
 */
export const currentRound = (manifest: Manifest): number => manifest.subtasks.reduce((max, s) => Math.max(max, s.round), 0);

/** What every follow-up inherits from the subtask it follows (never `deadline`: that is set at dispatch). */
const inherited = (from: DispatchedSubtask) => ({
  questionIds: [...from.questionIds],
  required: from.required,
  ...(from.justification === undefined ? {} : { justification: from.justification }),
  ...(from.deadlineSeconds === undefined ? {} : { deadlineSeconds: from.deadlineSeconds }),
  ...(from.budget === undefined ? {} : { budget: { ...from.budget } }),
  ...(from.input === undefined ? {} : { input: from.input }),
  ...(from.model === undefined ? {} : { model: from.model }),
});

const RETRYABLE = ['timed_out', 'invalid', 'empty'] as const;
type Retryable = (typeof RETRYABLE)[number];
const isRetryable = (state: string): state is Retryable => (RETRYABLE as readonly string[]).includes(state);

const retryOf = (chain: AttemptChain, policy: Policy, round: number): DispatchedSubtask | undefined => {
  if (!isRetryable(chain.state)) return undefined;
  const retriesUsed = chain.attempts.length - 1;
  if (retriesUsed >= policy.retry[chain.state]) return undefined;
  const attempt = chain.attempts.length + 1;
  const { origin } = chain;
  return {
    id: retryId(origin.id, attempt),
    worker: origin.worker,
    round,
    ...inherited(origin),
    assigned: origin.assigned,
    lineage: { kind: 'retry', of: origin.id, attempt },
  };
};

const recheckOf = (gap: ObservedGap, subtask: DispatchedSubtask, manifest: Manifest, round: number): DispatchedSubtask => ({
  id: recheckId(gap.subtaskId, gap.number),
  // The tax example: ask a narrower question of a different source when the kind declares one.
  worker: manifest.sources?.[subtask.worker]?.alternateSource ?? subtask.worker,
  round,
  ...inherited(subtask),
  assigned: gap.region,
  lineage: { kind: 'recheck', of: gap.subtaskId, gap: gap.region },
});

/**
 * The next round's subtasks, or none. After round `maxRounds` nothing more is dispatched, so
 * follow-ups can never loop. Otherwise: a retry of every line of work whose latest attempt
 * ended `timed_out`, `invalid` or `empty` and has retries left under `policy.retry[state]`
 * (same scope, worker and allowance); and a re-check of every observed gap not yet re-checked,
 * for exactly the gap, against the kind's `alternateSource` when the manifest's `sources`
 * declare one (a gap a `subdivide` hedge's winning piece left is re-checked as `<piece>.g<n>`).
 * Re-checks are not themselves re-checked; their retries follow the same rules.
 *
 * @example
 * planNextRound(taxManifest, outcomes)
 * // [{ id: 'B.g1', worker: 'transaction-feed', round: 2,
 * //    assigned: { from: '2025-06-28', toExclusive: '2025-07-01' },
 * //    lineage: { kind: 'recheck', of: 'B', gap: { … } }, … }]
 */
export const planNextRound = (manifest: Manifest, outcomes: readonly Outcome[], reconciliation: Reconciliation = reconcile(manifest, outcomes)): DispatchedSubtask[] => {
  const policy = policyOf(manifest);
  const finished = currentRound(manifest);
  if (finished >= policy.maxRounds) return [];
  const round = finished + 1;
  const { partitions, rechecks } = reconciliation.chains;
  const retries = [...partitions, ...rechecks].flatMap((chain) => retryOf(chain, policy, round) ?? []);
  const dispatched = new Set(manifest.subtasks.map((s) => s.id));
  // A gap a winning piece left is re-checked like any other: the piece is its subtask.
  const pieces = [...reconciliation.pieces.values()].flatMap((won) => won.map((piece) => piece.subtask));
  const byId = new Map([...manifest.subtasks, ...pieces].map((s) => [s.id, s]));
  const newRechecks = reconciliation.observedGaps.flatMap((gap) => {
    const subtask = byId.get(gap.subtaskId);
    if (!subtask || dispatched.has(recheckId(gap.subtaskId, gap.number))) return [];
    return [recheckOf(gap, subtask, manifest, round)];
  });
  return [...retries, ...newRechecks];
};
