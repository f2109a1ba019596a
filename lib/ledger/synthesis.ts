/**
 * Synthesis in the ledger: each synthesizer call reserved from the run's budget under a key of
 * its own, and the synthesis result stored, both keyed to the run's closing (the round it closes
 * in). A retried Reconcile finds the result and answers with it, or, when an earlier attempt
 * crashed between calls, finds the calls it already paid for and pays for none of them again.
 */
import { z } from 'zod';
import { AnswerSynthesis } from '../contract';
import { NEEDS_BLOCK, runRefusal, runUpdate, tenantRefusal, type RunCharge } from './budget';
import { BudgetExhausted, ItemTooLarge } from './errors';
import { cancellationReasons, conditionFailed } from './failures';
import { getItem, iso, putNew, transact, type LedgerContext } from './io';
import { leaseBlock } from './leases';
import { parseItem } from './items';
import { runPartition, SORT_KEYS, utcDay } from './keys';
import { valueSize } from './size';

/** A run and the round it closes in: what a synthesis is keyed to. */
export const SynthesisRef = z.object({ tenantId: z.string().min(1), runId: z.string().min(1), round: z.int().min(1) });
export type SynthesisRef = z.infer<typeof SynthesisRef>;

/** One synthesizer call to reserve: its 1-based number, its cost, and the synthesis allowance it must fit. */
export const SynthesisCall = SynthesisRef.extend({
  call: z.int().min(1),
  estimatedCostPerCall: z.int().min(0),
  /** The request's `synthesis.budget.modelCalls`: a call numbered past it is refused. */
  modelCalls: z.int().min(1),
});
export type SynthesisCall = z.infer<typeof SynthesisCall>;

/** What reserving a call did: charged it now, or found it charged by an earlier attempt. */
export interface SynthesisReservation {
  readonly charged: boolean;
}

/** The stored synthesis of a closing. */
const SynthesisItem = z.object({
  pk: z.string(),
  sk: z.string(),
  entity: z.literal('synthesis'),
  round: z.int(),
  synthesis: AnswerSynthesis,
  createdAt: z.string(),
});

/** The largest stored synthesis: an item holds 400 KB, with room for its keys. */
const SYNTHESIS_LIMIT_BYTES = 380 * 1024;

const resultKey = (ref: SynthesisRef) => ({ pk: runPartition(ref.tenantId, ref.runId), sk: `${SORT_KEYS.synthesisPrefix}r${ref.round}` });
const callKey = (call: SynthesisCall) => ({ pk: runPartition(call.tenantId, call.runId), sk: `${resultKey(call).sk}#CALL#${call.call}` });

/** Calls a reservation tries before it gives up (each retry follows a block lease). */
const RESERVE_ATTEMPTS = 16;

/**
 * Reserves one synthesizer call: one transaction that writes the call's own item (which must not
 * exist) and charges the run's budget and its block of the tenant's day, as a worker's call is
 * charged. The call's item existing already means an earlier attempt of this closing paid for it:
 * nothing is charged again. Refusals: `BudgetExhausted` (`synthesis` past the request's
 * allowance; `run`, `tenant`), `RunCancelled`, `RunEnded`, `RunNotFound`.
 */
export const reserveSynthesisCall = async (ctx: LedgerContext, raw: SynthesisCall): Promise<SynthesisReservation> => {
  const call = SynthesisCall.parse(raw);
  const context = { tenantId: call.tenantId, runId: call.runId, operation: 'reserveSynthesisCall' };
  if (call.call > call.modelCalls) {
    throw new BudgetExhausted({ ...context, limit: 'synthesis', counter: 'calls', remaining: 0, requested: 1 });
  }
  const now = ctx.now();
  const charge: RunCharge = { context, cost: call.estimatedCostPerCall, now, day: utcDay(now) };
  if (ctx.dailyAllowance !== undefined) {
    const impossible = tenantRefusal(charge, ctx.dailyAllowance, undefined);
    if (impossible !== undefined) throw impossible;
  }
  const item = { ...callKey(call), entity: 'synthesis-call', call: call.call, cost: call.estimatedCostPerCall, reservedAt: iso(now) };
  for (let attempt = 1; attempt <= RESERVE_ATTEMPTS; attempt += 1) {
    try {
      await transact(ctx, context, [{ kind: 'put', item, condition: 'attribute_not_exists(#pk)' }, runUpdate(charge)]);
      return { charged: true };
    } catch (error) {
      const reasons = cancellationReasons(error);
      if (reasons === undefined) throw error;
      const [own, run] = reasons;
      if (conditionFailed(own)) return { charged: false };
      const verdict = conditionFailed(run) ? runRefusal(charge, run.item, error) : undefined;
      if (verdict !== NEEDS_BLOCK) throw verdict ?? error;
      await leaseBlock(ctx, { context, cost: charge.cost, now, day: charge.day });
    }
  }
  throw new BudgetExhausted({ ...context, limit: 'tenant', counter: 'calls', remaining: 0, requested: 1 });
};

/** The synthesis stored for a closing, if an earlier attempt stored one. */
export const readSynthesis = async (ctx: LedgerContext, raw: SynthesisRef): Promise<AnswerSynthesis | undefined> => {
  const ref = SynthesisRef.parse(raw);
  const image = await getItem(ctx, resultKey(ref));
  return image === undefined ? undefined : parseItem(SynthesisItem, image, ref).synthesis;
};

/**
 * Stores a closing's synthesis, first writer wins, and returns the one stored: a concurrent or
 * earlier attempt's result is kept, so every attempt answers the same.
 */
export const recordSynthesis = async (ctx: LedgerContext, raw: SynthesisRef, synthesis: AnswerSynthesis): Promise<AnswerSynthesis> => {
  const ref = SynthesisRef.parse(raw);
  const item = { ...resultKey(ref), entity: 'synthesis', round: ref.round, synthesis: AnswerSynthesis.parse(synthesis), createdAt: iso(ctx.now()) };
  const bytes = valueSize(item);
  if (bytes > SYNTHESIS_LIMIT_BYTES) {
    throw new ItemTooLarge({ tenantId: ref.tenantId, runId: ref.runId, what: 'synthesis', bytes, limit: SYNTHESIS_LIMIT_BYTES });
  }
  try {
    await putNew(ctx, item);
    return item.synthesis;
  } catch (error) {
    if ((error as { name?: unknown }).name !== 'ConditionalCheckFailedException') throw error;
    return (await readSynthesis(ctx, ref)) ?? item.synthesis;
  }
};
