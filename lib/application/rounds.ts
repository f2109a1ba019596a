import { RunCancelled, type AppendedRound, type Ledger, type RunRecord } from '../ledger';

/**
 * When round `round` was first written. A retried append must fix the same absolute deadlines,
 * so the instant is recovered from any subtask of the round an earlier attempt already wrote
 * (committed or not); the first attempt takes `now`.
 *
 * @example
 * dispatchedAt(Date.now(), 1, record) // '2040-06-01T12:00:00.000Z' on a retry of round 1
 */
export const dispatchedAt = (now: number, round: number, record: Pick<RunRecord, 'subtasks' | 'uncommitted'>): string =>
  [...record.subtasks, ...record.uncommitted].find((item) => item.round === round)?.dispatchedAt ?? new Date(now).toISOString();

/**
 * Appends a round as it was decided, or nothing (`undefined`) when the run was cancelled in the
 * meantime: a cancelled run gets no new round.
 */
export const appendUnlessCancelled = (ledger: Pick<Ledger, 'appendRound'>, ...args: Parameters<Ledger['appendRound']>): Promise<AppendedRound | undefined> =>
  ledger.appendRound(...args).catch((error: unknown) => {
    if (error instanceof RunCancelled) return undefined;
    throw error;
  });
