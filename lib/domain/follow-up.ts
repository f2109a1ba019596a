import { Policy, type DispatchedSubtask, type Manifest, type Outcome } from '../contract';
import { RUN_HISTORY, followUpRoom, type RunHistory } from './history';
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

/** Every follow-up the policy asks for in round `round`, before the history bound is applied. */
const wantedFollowUps = (manifest: Manifest, policy: Policy, reconciliation: Reconciliation, round: number): DispatchedSubtask[] => {
  const { partitions, rechecks } = reconciliation.chains;
  const retries = [...partitions, ...rechecks].flatMap((chain) => retryOf(chain, policy, round) ?? []);
  const dispatched = new Set(manifest.subtasks.map((s) => s.id));
  const byId = new Map(manifest.subtasks.map((s) => [s.id, s]));
  const newRechecks = reconciliation.observedGaps.flatMap((gap) => {
    const subtask = byId.get(gap.subtaskId);
    if (!subtask || dispatched.has(recheckId(gap.subtaskId, gap.number))) return [];
    return [recheckOf(gap, subtask, manifest, round)];
  });
  return [...retries, ...newRechecks];
};

/** The first `room` follow-ups, required work first, kept in the order they were planned. */
const withinRoom = (wanted: DispatchedSubtask[], room: number): DispatchedSubtask[] => {
  if (wanted.length <= room) return wanted;
  const chosen = new Set([...wanted.filter((s) => s.required), ...wanted.filter((s) => !s.required)].slice(0, room));
  return wanted.filter((s) => chosen.has(s));
};

/**
 * The next round's subtasks, or none. After round `maxRounds` nothing more is dispatched, so
 * follow-ups can never loop. Otherwise: a retry of every line of work whose latest attempt
 * ended `timed_out`, `invalid` or `empty` and has retries left under `policy.retry[state]`
 * (same scope, worker and allowance); and a re-check of every observed gap not yet re-checked,
 * for exactly the gap, against the kind's `alternateSource` when the manifest's `sources`
 * declare one. Re-checks are not themselves re-checked; their retries follow the same rules.
 *
 * The round is capped by the run's history bound: with every round's overhead and every
 * subtask dispatched so far counted at its costliest path (`history`), only as many follow-ups
 * are dispatched as still fit the execution's history, required ones first. Those left out are
 * not lost: {@link followUpsLeftByBound} names them, and the coverage reports their gaps as
 * `notFollowedUp: 'history_bound'`.
 *
 * @example
 * planNextRound(taxManifest, outcomes)
 * // [{ id: 'B.g1', worker: 'transaction-feed', round: 2,
 * //    assigned: { from: '2025-06-28', toExclusive: '2025-07-01' },
 * //    lineage: { kind: 'recheck', of: 'B', gap: { … } }, … }]
 */
export const planNextRound = (
  manifest: Manifest,
  outcomes: readonly Outcome[],
  reconciliation: Reconciliation = reconcile(manifest, outcomes),
  history: RunHistory = RUN_HISTORY,
): DispatchedSubtask[] => {
  const policy = policyOf(manifest);
  const finished = currentRound(manifest);
  if (finished >= policy.maxRounds) return [];
  const wanted = wantedFollowUps(manifest, policy, reconciliation, finished + 1);
  return withinRoom(wanted, followUpRoom(finished, manifest.subtasks.length, history));
};

/** Follow-ups the policy allowed that the history bound kept from being dispatched. */
export interface FollowUpsLeft {
  /** The latest attempts of lines of work that were not retried. */
  readonly retries: ReadonlySet<string>;
  /** The ids the re-checks of never re-checked observed gaps would have had (`B.g1`). */
  readonly rechecks: ReadonlySet<string>;
}

/**
 * The follow-ups the policy allowed but no round dispatched. Planning is deterministic and
 * capped only by the history bound, so a line of work or observed gap from round `r` that the
 * policy would follow up (retries left, or never re-checked) and `r < maxRounds` was left out
 * by the bound when a later round exists, or when the run is `closing` after reconciling round
 * `r` (a run that ends any other way, cancelled or aborted, never planned that round).
 *
 * @example
 * followUpsLeftByBound(manifest, reconciliation, true).retries.has('A') // A timed out, no room for A.r2
 */
export const followUpsLeftByBound = (manifest: Manifest, reconciliation: Reconciliation, closing: boolean): FollowUpsLeft => {
  const policy = policyOf(manifest);
  const last = currentRound(manifest);
  const leftOut = (round: number): boolean => round < policy.maxRounds && (round < last || closing);
  const wanted = wantedFollowUps(manifest, policy, reconciliation, last + 1);
  const retries = new Set<string>();
  const rechecks = new Set<string>();
  const latest = new Map([...reconciliation.chains.partitions, ...reconciliation.chains.rechecks].map((c) => [c.origin.id, c.latest]));
  const byId = new Map(manifest.subtasks.map((s) => [s.id, s]));
  for (const subtask of wanted) {
    const { lineage } = subtask;
    if (lineage?.kind === 'retry') {
      const previous = latest.get(lineage.of);
      if (previous && leftOut(previous.round)) retries.add(previous.id);
    } else if (lineage?.kind === 'recheck') {
      const gapped = byId.get(lineage.of);
      if (gapped && leftOut(gapped.round)) rechecks.add(subtask.id);
    }
  }
  return { retries, rechecks };
};
