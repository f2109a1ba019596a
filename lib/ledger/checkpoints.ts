/**
 * Checkpoints: what a running worker's tools have observed so far, stored on its subtask item by
 * the SDK (lib/workers/checkpointer.ts). One conditional UpdateItem per checkpoint, bound to the
 * claim like every holder write: only the current generation, while it runs, before its lease
 * and its deadline run out. A checkpoint replaces the one before it only with a later sequence
 * number, so a retried or reordered write never shrinks what is stored. The findings and the
 * observation they rest on travel in that one write (`Checkpoint.partial`).
 *
 * Write cost: one UpdateItem of the subtask item, 1 WCU per started KiB of the item after the
 * write (an item of a few KiB: 2 to 4 WCU), at most `MAX_CHECKPOINTS` per subtask across its
 * generations; no read, and no write of the run item.
 */
import { Checkpoint, type CheckpointInput } from '../contract';
import { toPlainJson } from './canonical';
import { DeadlinePassed, HandedOver, InvalidLedgerInput, LeaseLost } from './errors';
import { conditionFailure } from './failures';
import { claimContext, holderRefusal, oldSubtask } from './holder';
import { Claim, parseInput } from './inputs';
import { iso, updateItem, type LedgerContext } from './io';
import { subtaskKey } from './keys';
import { withShards } from './shards';

import { MAX_CHECKPOINTS } from '../domain/checkpoint';

export { MAX_CHECKPOINTS };

/** The largest checkpoint stored, as JSON: a subtask item holds its assignment and outcome too, within DynamoDB's 400 KB. */
export const MAX_CHECKPOINT_BYTES = 64 * 1024;

/** The result of `writeCheckpoint`. */
export interface CheckpointWrite {
  /** False when a checkpoint with this or a later sequence number was already stored (a retry, or a write overtaken). */
  readonly written: boolean;
  /**
   * True when the subtask handed over to its hedge pieces (docs/hedging.md, "Handover"): the
   * stored checkpoint is frozen as the prefix, and the worker should stop (the SDK aborts
   * `ctx.signal` with `SubtaskHandedOver`); its later writes are refused with `HandedOver`.
   */
  readonly handedOver?: true;
}

const parseCheckpoint = (claim: Claim, raw: CheckpointInput): Checkpoint => {
  const checkpoint = parseInput(Checkpoint, raw, 'writeCheckpoint');
  const issues: string[] = [];
  if (checkpoint.generation !== claim.generation) issues.push(`generation ${checkpoint.generation} is not the claim's ${claim.generation}`);
  if (checkpoint.sequence > MAX_CHECKPOINTS) issues.push(`sequence ${checkpoint.sequence} is past the ${MAX_CHECKPOINTS} checkpoints a subtask may store`);
  const plain = {
    ...checkpoint,
    ...(checkpoint.partial === undefined ? {} : { partial: { ...checkpoint.partial, findings: toPlainJson(checkpoint.partial.findings) } }),
  };
  const bytes = Buffer.byteLength(JSON.stringify(plain));
  if (bytes > MAX_CHECKPOINT_BYTES) issues.push(`checkpoint is ${bytes} bytes of JSON, more than ${MAX_CHECKPOINT_BYTES}`);
  if (issues.length > 0) throw new InvalidLedgerInput({ ...claimContext(claim), operation: 'writeCheckpoint', issues });
  return plain;
};

/**
 * Stores the claimed subtask's latest checkpoint. Refusals, from the item as it was: `LeaseLost`
 * (a newer generation claimed it, it was released, or the lease expired: a stale generation's
 * checkpoint never lands), `AlreadyTerminal` / `HedgeLost` / `RunCancelled` (it ended), and
 * `DeadlinePassed`. A checkpoint whose sequence is not after the stored one is not written
 * (`written: false`); nor is one after the subtask handed over to its hedge pieces
 * (`handedOver: true`: the checkpoint the handover froze stays the prefix).
 *
 * @example
 * await ledger.writeCheckpoint(claim, { generation: claim.generation, sequence: 1, writtenAt, covered, observed, … });
 */
export const writeCheckpoint = async (ctx: LedgerContext, rawClaim: Claim, raw: CheckpointInput): Promise<CheckpointWrite> => {
  const claim = await withShards(ctx, parseInput(Claim, rawClaim, 'writeCheckpoint'));
  const checkpoint = parseCheckpoint(claim, raw);
  const now = ctx.now();
  const key = subtaskKey(claim.tenantId, claim.runId, claim.subtaskId, claim.shards);
  try {
    await updateItem(
      ctx,
      { operation: 'writeCheckpoint', ...claimContext(claim) },
      key,
      {
        update: 'SET #checkpoint = :checkpoint, #checkpointSequence = :sequence, #updatedAt = :nowIso',
        condition:
          'attribute_exists(#pk) AND #generation = :generation AND #state = :running AND attribute_not_exists(#handedOverAt) ' +
          'AND #leaseExpiresAt > :now AND #deadlineMs > :now AND (attribute_not_exists(#checkpointSequence) OR #checkpointSequence < :sequence)',
      },
      { ':checkpoint': checkpoint, ':sequence': checkpoint.sequence, ':nowIso': iso(now), ':generation': claim.generation, ':running': 'running', ':now': now },
    );
    return { written: true };
  } catch (error) {
    const failure = conditionFailure(error);
    if (failure === undefined) throw error;
    const old = oldSubtask(claim, failure.item);
    const holder = holderRefusal(claim, old);
    if (holder instanceof HandedOver) return { written: false, handedOver: true };
    if (holder !== undefined) throw holder;
    const context = claimContext(claim);
    if (old.deadlineMs <= now) throw new DeadlinePassed({ ...context, deadline: iso(old.deadlineMs) }, { cause: error });
    if ((old.leaseExpiresAt ?? 0) <= now) {
      throw new LeaseLost({ ...context, generation: claim.generation, currentGeneration: old.generation, reason: 'lease_expired' }, { cause: error });
    }
    return { written: false };
  }
};
