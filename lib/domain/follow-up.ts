import { Policy, type DispatchedSubtask, type Manifest, type Outcome } from '../contract';
import type { WorkerCatalog } from './catalog';
import { RUN_HISTORY, nextRoundRoom, roundSizes, type RoundPaths, type RunHistory } from './history';
import { HEDGE_SUFFIX, recheckId, retryId, type AttemptChain, type ChainState } from './lineage';
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

/**
 * The `policy.retry` entry that retries a line of work, by how its latest attempt ended
 * (`undefined`: never retried). A record over every way a line of work ends other than `ok`, so
 * a new terminal state does not compile until it is decided here. A cancelled line of work is
 * not retried (its run is over), nor one with no outcome (`missing_outcome`: it never ended, so
 * there is no ending to retry after).
 */
const RETRY_ENTRY: Readonly<Record<Exclude<ChainState, 'ok'>, keyof Policy['retry'] | undefined>> = {
  timed_out: 'timed_out',
  invalid: 'invalid',
  empty: 'empty',
  cancelled: undefined,
  missing_outcome: undefined,
};

const retryOf = (chain: AttemptChain, policy: Policy, round: number): DispatchedSubtask | undefined => {
  const entry = chain.state === 'ok' ? undefined : RETRY_ENTRY[chain.state];
  if (entry === undefined) return undefined;
  const retriesUsed = chain.attempts.length - 1;
  if (retriesUsed >= policy.retry[entry]) return undefined;
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
  // A kind without one still re-reads its own gap: a source that lost records once (a page that
  // shifted while it was read) may return them now, and data found is data read. An empty answer
  // from the same kind settles nothing, though: the gap stays `unconfirmed_empty` (coverage.ts).
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

/** The first `room` follow-ups, required work first, kept in the order they were planned. */
const withinRoom = (wanted: DispatchedSubtask[], room: number): DispatchedSubtask[] => {
  if (wanted.length <= room) return wanted;
  const chosen = new Set([...wanted.filter((s) => s.required), ...wanted.filter((s) => !s.required)].slice(0, room));
  return wanted.filter((s) => chosen.has(s));
};

/** The next round as it is decided: what is dispatched, and what the plan cut. */
export interface PlannedRound {
  /** The next round's subtasks, in the order they are dispatched; none when the run closes. */
  readonly subtasks: DispatchedSubtask[];
  /**
   * Follow-ups the policy allowed that the history bound kept out of this round (their ids, as
   * they would have been dispatched: `C.r2`, `B.g1`). The ledger keeps them with the round, and
   * the answer reads them back ({@link followUpsLeft}): nobody plans the round again.
   */
  readonly notFollowedUp: string[];
}

/**
 * The next round, decided once. After round `maxRounds` nothing more is dispatched, so
 * follow-ups can never loop. Otherwise: a retry of every line of work whose latest attempt
 * ended `timed_out`, `invalid` or `empty` and has retries left under `policy.retry[state]`
 * (same scope, worker and allowance); and a re-check of every observed gap not yet re-checked,
 * for exactly the gap, against the kind's `alternateSource` when the manifest's `sources`
 * declare one, else by the same kind, which can find data but never confirm the gap empty
 * (a gap a `subdivide` hedge's winning piece left is re-checked as `<piece>.g<n>`, so pass the
 * `reconciliation` made with the pieces). Re-checks are not themselves re-checked; their retries
 * follow the same rules.
 *
 * The round is capped by the run's history bound: with every round's overhead and every
 * subtask dispatched so far counted at its costliest path (`history`), only as many follow-ups
 * are dispatched as still fit the execution's history, required ones first. Those left out are
 * returned as `notFollowedUp`, and the coverage reports their gaps as
 * `notFollowedUp: 'history_bound'`.
 *
 * @example
 * planFollowUps(taxManifest, outcomes).subtasks
 * // [{ id: 'B.g1', worker: 'transaction-feed', round: 2,
 * //    assigned: { from: '2025-06-28', toExclusive: '2025-07-01' },
 * //    lineage: { kind: 'recheck', of: 'B', gap: { … } }, … }]
 */
export const planFollowUps = (
  manifest: Manifest,
  outcomes: readonly Outcome[],
  reconciliation: Reconciliation = reconcile(manifest, outcomes),
  history: RunHistory = RUN_HISTORY,
  paths?: RoundPaths,
): PlannedRound => {
  const policy = policyOf(manifest);
  const finished = currentRound(manifest);
  if (finished >= policy.maxRounds) return { subtasks: [], notFollowedUp: [] };
  const wanted = wantedFollowUps(manifest, policy, reconciliation, finished + 1);
  const kept = withinRoom(wanted, nextRoundRoom(roundSizes(manifest.subtasks), policy.maxRounds, paths, history));
  const dispatched = new Set(kept);
  return { subtasks: kept, notFollowedUp: wanted.filter((s) => !dispatched.has(s)).map((s) => s.id) };
};

/**
 * The next round's subtasks ({@link planFollowUps} without what it cut).
 *
 * @example
 * planNextRound(taxManifest, outcomes).map((s) => s.id) // ['B.g1']
 */
export const planNextRound = (
  manifest: Manifest,
  outcomes: readonly Outcome[],
  reconciliation: Reconciliation = reconcile(manifest, outcomes),
  history: RunHistory = RUN_HISTORY,
  paths?: RoundPaths,
): DispatchedSubtask[] => planFollowUps(manifest, outcomes, reconciliation, history, paths).subtasks;

/**
 * The planned round with each new re-check's `input` made the input of the kind that runs it: a
 * re-check is planned with the input of the subtask whose gap it re-checks, and when that kind
 * declares `recheckInput` (its alternate source takes another input), the input is mapped. A
 * re-check by the same kind, a retry (which inherits its re-check's mapped input) and every other
 * subtask are returned as they are.
 *
 * @example
 * withRecheckInputs(planNextRound(manifest, outcomes), manifest, catalog)
 * // [{ id: 'H.g1', worker: 'ticket-export', input: { format: 'csv' }, … }] (the helpdesk's { pageSize: 20 } mapped)
 */
export const withRecheckInputs = (subtasks: readonly DispatchedSubtask[], manifest: Manifest, catalog: WorkerCatalog): DispatchedSubtask[] => {
  const byId = new Map(manifest.subtasks.map((s) => [s.id, s]));
  return subtasks.map((subtask) => {
    const { lineage } = subtask;
    if (lineage?.kind !== 'recheck') return subtask;
    // A gap a hedge piece left (`C.h2`) is re-checked with the input of the subtask it is a piece of.
    const primary = byId.get(lineage.of) ?? byId.get(lineage.of.replace(HEDGE_SUFFIX, ''));
    const map = primary === undefined || primary.worker === subtask.worker ? undefined : catalog.get(primary.worker)?.recheckInput;
    return map === undefined ? subtask : { ...subtask, input: map(primary?.input) };
  });
};

/** Follow-ups the policy allowed that the history bound kept from being dispatched. */
export interface FollowUpsLeft {
  /** The latest attempts of lines of work that were not retried. */
  readonly retries: ReadonlySet<string>;
  /** The ids the re-checks of never re-checked observed gaps would have had (`B.g1`). */
  readonly rechecks: ReadonlySet<string>;
}

const RETRY_ID = /^(.+)\.r(\d+)$/;

/**
 * What the plans of a run cut and no later round dispatched, from the ids they cut
 * ({@link PlannedRound.notFollowedUp}, as the ledger kept them round by round, and the closing
 * boundary's own). A cut retry names the attempt whose outcome stands (`C` for `C.r2`, `C.r2`
 * for `C.r3`); a cut re-check names itself. A follow-up a later round did dispatch, or one whose
 * attempt the manifest lacks, is not reported.
 *
 * @example
 * followUpsLeft(manifest, ['C.r2', 'B.g1']) // { retries: Set {'C'}, rechecks: Set {'B.g1'} }
 */
export const followUpsLeft = (manifest: Manifest, cut: readonly string[]): FollowUpsLeft => {
  const dispatched = new Set(manifest.subtasks.map((s) => s.id));
  const retries = new Set<string>();
  const rechecks = new Set<string>();
  for (const id of cut) {
    if (dispatched.has(id)) continue;
    const retry = RETRY_ID.exec(id);
    if (retry === null) {
      rechecks.add(id);
      continue;
    }
    const [, origin = '', attempt = '0'] = retry;
    const previous = Number(attempt) === 2 ? origin : retryId(origin, Number(attempt) - 1);
    if (dispatched.has(previous)) retries.add(previous);
  }
  return { retries, rechecks };
};
