/**
 * Explaining a refused write by a claim holder from the subtask as it was (`ALL_OLD`): the
 * generation is the fence, so a replacement's generation makes every older claim stale, and a
 * terminal state ends every claim.
 */
import { AlreadyTerminal, HandedOver, HedgeLost, LeaseLost, RunCancelled, SubtaskNotFound, type LedgerError } from './errors';
import type { Claim } from './inputs';
import { parseItem, StoredSubtaskItem, type HedgeWinnerItem } from './items';
import { isTerminal } from './view';

/**
 * The winner of a hedged race in a few words, for errors and logs.
 *
 * @example
 * winnerName({ by: 'pieces', ids: ['A.h1', 'A.h2'] }) // 'pieces A.h1, A.h2'
 */
export const winnerName = (winner: HedgeWinnerItem): string => (winner.by === 'pieces' ? `pieces ${winner.ids.join(', ')}` : winner.id);

/** The error context of a claim: who, in which run, on which subtask. */
export const claimContext = (claim: Pick<Claim, 'tenantId' | 'runId' | 'subtaskId'>) => ({
  tenantId: claim.tenantId,
  runId: claim.runId,
  subtaskId: claim.subtaskId,
});

/**
 * Parses the old image of a subtask from a condition failure; a missing image means the subtask
 * does not exist.
 *
 * @example
 * const item = oldSubtask(claim, reasons[0]?.item);
 */
export const oldSubtask = (claim: Pick<Claim, 'tenantId' | 'runId' | 'subtaskId'>, image: Record<string, unknown> | undefined): StoredSubtaskItem => {
  if (image === undefined) throw new SubtaskNotFound(claimContext(claim));
  return parseItem(StoredSubtaskItem, image, claimContext(claim));
};

/**
 * Why `claim` no longer authorises its holder, judged from the subtask item; `undefined` when it
 * still does (the refusal then had another cause: deadline, lease, budget).
 *
 * @example
 * const refusal = holderRefusal(claim, item); if (refusal) throw refusal;
 */
export const holderRefusal = (claim: Claim, item: StoredSubtaskItem): LedgerError | undefined => {
  const context = claimContext(claim);
  if (item.generation !== claim.generation) {
    return new LeaseLost({ ...context, generation: claim.generation, currentGeneration: item.generation, reason: 'superseded' });
  }
  if (item.state === 'cancelled') return new RunCancelled(context);
  if (!isTerminal(item.state) && item.handedOverAt !== undefined) return new HandedOver({ ...context, handedOverAt: item.handedOverAt });
  if (isTerminal(item.state) && item.hedgeWinner !== undefined) return new HedgeLost({ ...context, state: item.state, winner: winnerName(item.hedgeWinner) });
  if (isTerminal(item.state)) return new AlreadyTerminal({ ...context, state: item.state });
  if (item.state === 'pending') {
    return new LeaseLost({ ...context, generation: claim.generation, currentGeneration: item.generation, reason: 'released' });
  }
  return undefined;
};
