import { Policy, type DispatchedSubtask, type Manifest, type Outcome } from '../contract';
import type { WorkerCatalog } from './catalog';
import { prefixRegion, type ResumedLine } from './checkpoint';
import { dimensionOf } from './scope';
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

/**
 * The retry of a line of work whose latest attempt may go again. A line that resumed from
 * checkpoints ({@link resumedLine}) is sent only what is unread: the latest attempt's rest when
 * it timed out with partial findings, else the latest attempt's own scope, with every counted
 * prefix in `lineage.prefix`. Any other line is sent its whole scope again.
 */
const retryOf = (chain: AttemptChain, policy: Policy, round: number, resumed: ResumedLine | undefined): DispatchedSubtask | undefined => {
  const entry = chain.state === 'ok' ? undefined : RETRY_ENTRY[chain.state];
  if (entry === undefined) return undefined;
  const retriesUsed = chain.attempts.length - 1;
  if (retriesUsed >= policy.retry[entry]) return undefined;
  const attempt = chain.attempts.length + 1;
  const { origin } = chain;
  const rest = resumed === undefined ? undefined : (resumed.unsent ?? chain.latest.assigned);
  const prefix = resumed === undefined ? undefined : prefixRegion(dimensionOf(origin.assigned), resumed);
  return {
    id: retryId(origin.id, attempt),
    worker: origin.worker,
    round,
    ...inherited(origin),
    assigned: rest ?? origin.assigned,
    lineage: { kind: 'retry', of: origin.id, attempt, ...(prefix === undefined ? {} : { prefix }) },
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

/** Every follow-up the policy asks for in round `round`. */
const wantedFollowUps = (manifest: Manifest, policy: Policy, reconciliation: Reconciliation, round: number): DispatchedSubtask[] => {
  const { partitions, rechecks } = reconciliation.chains;
  const retries = [...partitions, ...rechecks].flatMap((chain) => retryOf(chain, policy, round, reconciliation.resumed.get(chain.origin.id)) ?? []);
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

/**
 * The next round, decided once. After round `maxRounds` nothing more is dispatched, so
 * follow-ups can never loop. Otherwise: a retry of every line of work whose latest attempt
 * ended `timed_out`, `invalid` or `empty` and has retries left under `policy.retry[state]`
 * (same scope, worker and allowance); and a re-check of every observed gap not yet re-checked,
 * for exactly the gap, against the kind's `alternateSource` when the manifest's `sources`
 * declare one, else by the same kind, which can find data but never confirm the gap empty
 * (a gap a `subdivide` hedge's winning piece left is re-checked as `<piece>.g<n>`, so pass the
 * `reconciliation` made with the pieces). Re-checks are not themselves re-checked; their retries
 * follow the same rules. Every round runs as batches of child executions, so no round is too
 * large for the run's execution and nothing the policy allows is cut.
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
): DispatchedSubtask[] => {
  const policy = policyOf(manifest);
  const finished = currentRound(manifest);
  if (finished >= policy.maxRounds) return [];
  return wantedFollowUps(manifest, policy, reconciliation, finished + 1);
};

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
