import { describe, expect, it } from 'vitest';
import {
  AlreadySealed,
  AlreadyTerminal,
  BudgetExhausted,
  ClaimHeld,
  DeadlineNotReached,
  DeadlinePassed,
  LeaseLost,
  SubtaskNotFound,
  toRunResource,
} from '../../lib/ledger';
import { uniqueName } from '../support/aws';
import { dispatched, ledgerTestTable, okOutcome, startRun } from './support';

const suite = ledgerTestTable('ledger-claims');
const { clock } = suite;

/** A run with quarters A and B of 2025, each due at 12:01:00 with 4 calls at 7 per call. */
const twoQuarters = async () => {
  const tenantId = uniqueName('tenant');
  const runId = await startRun(suite.ledger, tenantId, [dispatched('A', '2025-01-01', '2025-04-01'), dispatched('B', '2025-04-01', '2025-07-01')]);
  const ref = (subtaskId: string) => ({ tenantId, runId, subtaskId });
  const resource = async () => toRunResource((await suite.ledger.getRun(tenantId, runId))!);
  return { tenantId, runId, ref, resource };
};

describe('duplicate delivery', () => {
  it('produces one claim, one charge and one outcome', async () => {
    const { ref, resource } = await twoQuarters();
    const claim = await suite.ledger.claimSubtask({ ...ref('A'), workerId: 'w-1', leaseMs: 30_000 });
    expect(claim).toMatchObject({ generation: 1, leaseExpiresAt: '2040-06-01T12:00:30.000Z', deadline: '2040-06-01T12:01:00.000Z' });
    expect(claim.subtask.assigned).toEqual({ from: '2025-01-01', toExclusive: '2025-04-01' });

    const duplicate = suite.ledger.claimSubtask({ ...ref('A'), workerId: 'w-2', leaseMs: 30_000 });
    await expect(duplicate).rejects.toBeInstanceOf(ClaimHeld);
    await expect(duplicate).rejects.toMatchObject({ generation: 1, workerId: 'w-1', leaseExpiresAt: '2040-06-01T12:00:30.000Z' });

    await suite.ledger.reserveBudget(claim);
    await expect(suite.ledger.recordOutcome(claim, okOutcome('A', '2025-01-02', '2025-03-31', 180))).resolves.toEqual({
      taskToken: undefined,
      duplicate: false,
    });
    await expect(suite.ledger.recordOutcome(claim, okOutcome('A', '2025-01-02', '2025-03-31', 180))).resolves.toEqual({
      taskToken: undefined,
      duplicate: true,
    });
    await expect(suite.ledger.claimSubtask({ ...ref('A'), workerId: 'w-3', leaseMs: 30_000 })).rejects.toMatchObject({ name: 'AlreadyTerminal', state: 'ok' });

    const view = await resource();
    expect(view.usage).toEqual({ modelCalls: 1, estimatedCost: 7 });
    expect(view.subtasks[0]).toMatchObject({ state: 'ok', usage: { modelCalls: 1, estimatedCost: 7 }, observed: { recordCount: 180 } });
    expect(view.subtasks[0]?.late).toBeUndefined();
  });
});

describe('leases and generations', () => {
  it('fences off an expired holder once its replacement claims, and the replacement inherits the allowance', async () => {
    const { ref, resource } = await twoQuarters();
    const first = await suite.ledger.claimSubtask({ ...ref('A'), workerId: 'w-old', leaseMs: 20_000 });
    for (let call = 0; call < 3; call += 1) await suite.ledger.reserveBudget(first);
    clock.advance(21_000);
    const replacement = await suite.ledger.claimSubtask({ ...ref('A'), workerId: 'w-new', leaseMs: 20_000 });
    expect(replacement.generation).toBe(2);

    const stale = { name: 'LeaseLost', generation: 1, currentGeneration: 2, reason: 'superseded' };
    await expect(suite.ledger.reserveBudget(first)).rejects.toMatchObject(stale);
    await expect(suite.ledger.recordOutcome(first, okOutcome('A', '2025-01-02', '2025-03-31', 10))).rejects.toMatchObject(stale);
    await expect(suite.ledger.releaseClaim(first)).rejects.toMatchObject(stale);

    await suite.ledger.reserveBudget(replacement);
    const fifth = suite.ledger.reserveBudget(replacement);
    await expect(fifth).rejects.toBeInstanceOf(BudgetExhausted);
    await expect(fifth).rejects.toMatchObject({ limit: 'subtask', counter: 'calls', remaining: 0, requested: 1 });
    await suite.ledger.recordOutcome(replacement, okOutcome('A', '2025-01-02', '2025-03-31', 180));

    const view = await resource();
    expect(view.subtasks[0]).toMatchObject({ state: 'ok', usage: { modelCalls: 4, estimatedCost: 28 } });
    expect(view.subtasks[0]?.late).toBeUndefined();
    expect(view.usage).toEqual({ modelCalls: 4, estimatedCost: 28 });
  });

  it('refuses a reservation on an expired lease even before anyone replaces it', async () => {
    const { ref } = await twoQuarters();
    const claim = await suite.ledger.claimSubtask({ ...ref('A'), workerId: 'w-1', leaseMs: 10_000 });
    clock.advance(10_000);
    await expect(suite.ledger.reserveBudget(claim)).rejects.toMatchObject({ name: 'LeaseLost', reason: 'lease_expired', currentGeneration: 1 });
  });

  it('lets a released claim be taken at once by the next delivery', async () => {
    const { ref } = await twoQuarters();
    const claim = await suite.ledger.claimSubtask({ ...ref('B'), workerId: 'w-1', leaseMs: 60_000 });
    await suite.ledger.releaseClaim(claim);
    await suite.ledger.releaseClaim(claim);
    await expect(suite.ledger.reserveBudget(claim)).rejects.toMatchObject({ name: 'LeaseLost', reason: 'released' });
    await expect(suite.ledger.claimSubtask({ ...ref('B'), workerId: 'w-2', leaseMs: 60_000 })).resolves.toMatchObject({ generation: 2, workerId: 'w-2' });
  });

  it('refuses claims after the deadline and claims of unknown subtasks', async () => {
    const { ref } = await twoQuarters();
    await expect(suite.ledger.claimSubtask({ ...ref('Z'), workerId: 'w-1', leaseMs: 1000 })).rejects.toBeInstanceOf(SubtaskNotFound);
    clock.set('2040-06-01T12:01:00.000Z');
    await expect(suite.ledger.claimSubtask({ ...ref('B'), workerId: 'w-1', leaseMs: 1000 })).rejects.toMatchObject({
      name: 'DeadlinePassed',
      deadline: '2040-06-01T12:01:00.000Z',
    });
  });
});

describe('seal and late evidence', () => {
  it('keeps a result that arrives after the seal as late evidence, and the state stays timed_out', async () => {
    const { ref, resource } = await twoQuarters();
    const claim = await suite.ledger.claimSubtask({ ...ref('A'), workerId: 'w-1', leaseMs: 120_000 });
    await suite.ledger.reserveBudget(claim);
    clock.set('2040-06-01T12:00:30.000Z');
    await expect(suite.ledger.sealTimedOut(ref('A'))).rejects.toBeInstanceOf(DeadlineNotReached);

    clock.set('2040-06-01T12:01:00.000Z');
    await expect(suite.ledger.sealTimedOut(ref('A'))).resolves.toEqual({
      sealed: true,
      state: 'timed_out',
      reason: 'deadline 2040-06-01T12:01:00.000Z passed; claimed by generation 1 (worker w-1) but no result arrived',
      taskToken: undefined,
    });
    clock.set('2040-06-01T12:01:05.000Z');
    const late = suite.ledger.recordOutcome(claim, okOutcome('A', '2025-01-02', '2025-03-31', 180));
    await expect(late).rejects.toBeInstanceOf(AlreadySealed);
    await expect(late).rejects.toMatchObject({ state: 'timed_out', generation: 1, keptAsLateEvidence: true });
    await expect(suite.ledger.recordOutcome(claim, okOutcome('A', '2025-01-02', '2025-03-31', 180))).rejects.toBeInstanceOf(AlreadySealed);
    await expect(suite.ledger.sealTimedOut(ref('A'))).resolves.toMatchObject({ sealed: false, state: 'timed_out' });

    const view = (await resource()).subtasks[0];
    expect(view).toMatchObject({ state: 'timed_out', observed: null, usage: { modelCalls: 1, estimatedCost: 7 } });
    expect(view?.reason).toBe(
      'deadline 2040-06-01T12:01:00.000Z passed; claimed by generation 1 (worker w-1); its result arrived late at 2040-06-01T12:01:05.000Z and is kept as late evidence',
    );
    expect(view?.late).toEqual([
      {
        receivedAt: '2040-06-01T12:01:05.000Z',
        generation: 1,
        refusedBecause: 'sealed',
        outcome: expect.objectContaining({
          state: 'ok',
          observed: { minDate: '2025-01-02', maxDate: '2025-03-31', recordCount: 180 },
          usage: { modelCalls: 1, estimatedCost: 7 },
        }),
      },
    ]);
  });

  it('keeps a result written after the deadline but before the seal, then seals', async () => {
    const { ref, resource } = await twoQuarters();
    const claim = await suite.ledger.claimSubtask({ ...ref('B'), workerId: 'w-1', leaseMs: 120_000 });
    clock.set('2040-06-01T12:01:00.001Z');
    await expect(suite.ledger.recordOutcome(claim, okOutcome('B', '2025-04-01', '2025-06-27', 214))).rejects.toMatchObject({
      name: 'DeadlinePassed',
      keptAsLateEvidence: true,
    });
    await expect(suite.ledger.sealTimedOut(ref('B'))).resolves.toMatchObject({ sealed: true, state: 'timed_out' });
    const view = (await resource()).subtasks[1];
    expect(view?.state).toBe('timed_out');
    expect(view?.late?.map((l) => l.refusedBecause)).toEqual(['deadline_passed']);
  });

  it('explains seals from what the subtask knows: never claimed, or failed deliveries', async () => {
    const { ref } = await twoQuarters();
    await expect(suite.ledger.recordDeliveryFailure({ ...ref('B'), receiveCount: 3, errorName: 'WorkerCrashed', deadLettered: true })).resolves.toEqual({
      recorded: true,
      state: 'pending',
    });
    clock.set('2040-06-01T12:01:00.000Z');
    await expect(suite.ledger.sealTimedOut(ref('A'))).resolves.toMatchObject({
      reason: 'deadline 2040-06-01T12:01:00.000Z passed; never claimed: no worker picked it up',
    });
    await expect(suite.ledger.sealTimedOut(ref('B'))).resolves.toMatchObject({
      reason: 'deadline 2040-06-01T12:01:00.000Z passed; 3 deliveries failed (last with WorkerCrashed); message dead-lettered; never claimed',
    });
    await expect(suite.ledger.recordDeliveryFailure({ ...ref('B'), receiveCount: 4, errorName: 'Late' })).resolves.toEqual({
      recorded: false,
      state: 'timed_out',
    });
  });

  it('records oversized findings deliberately as invalid, without the findings', async () => {
    const { ref, resource } = await twoQuarters();
    const claim = await suite.ledger.claimSubtask({ ...ref('A'), workerId: 'w-1', leaseMs: 30_000 });
    // 70,000 characters of text inside {"notes":"…"} (12 bytes of JSON around it): 70,012 bytes, over the 65,536 bound.
    await suite.ledger.recordOutcome(claim, { ...okOutcome('A', '2025-01-02', '2025-03-31', 180), findings: { notes: 'x'.repeat(70_000) } });
    const view = (await resource()).subtasks[0];
    expect(view?.state).toBe('invalid');
    expect(view?.reason).toBe('findings of 70012 bytes exceed the 65536-byte bound and were not stored');
    const { outcomes } = await suite.ledger.readManifest(ref('A').tenantId, ref('A').runId);
    expect(outcomes[0]?.findings).toBeUndefined();
  });
});

describe('waiters', () => {
  it('hands the token to whoever writes second', async () => {
    const { ref } = await twoQuarters();
    await expect(suite.ledger.registerWaiter({ ...ref('A'), taskToken: 'token-A' })).resolves.toEqual({ registered: true });
    const claimA = await suite.ledger.claimSubtask({ ...ref('A'), workerId: 'w-1', leaseMs: 30_000 });
    await expect(suite.ledger.recordOutcome(claimA, okOutcome('A', '2025-01-02', '2025-03-31', 180))).resolves.toEqual({
      taskToken: 'token-A',
      duplicate: false,
    });

    const claimB = await suite.ledger.claimSubtask({ ...ref('B'), workerId: 'w-2', leaseMs: 30_000 });
    await suite.ledger.recordOutcome(claimB, okOutcome('B', '2025-04-01', '2025-06-30', 214));
    await expect(suite.ledger.registerWaiter({ ...ref('B'), taskToken: 'token-B' })).resolves.toEqual({ registered: false, state: 'ok' });
    await expect(suite.ledger.claimSubtask({ ...ref('B'), workerId: 'w-3', leaseMs: 30_000 })).rejects.toBeInstanceOf(AlreadyTerminal);
  });

  it('returns the registered token from the seal', async () => {
    const { ref } = await twoQuarters();
    await suite.ledger.registerWaiter({ ...ref('B'), taskToken: 'token-B' });
    clock.set('2040-06-01T12:02:00.000Z');
    await expect(suite.ledger.sealTimedOut(ref('B'))).resolves.toMatchObject({ sealed: true, taskToken: 'token-B' });
    await expect(suite.ledger.getSubtask(ref('B'))).resolves.toMatchObject({ state: 'timed_out', taskToken: 'token-B' });
  });
});

describe('typed refusals', () => {
  it('are LedgerErrors that carry their context and the SDK error as cause', async () => {
    const { ref, runId } = await twoQuarters();
    const claim = await suite.ledger.claimSubtask({ ...ref('A'), workerId: 'w-1', leaseMs: 30_000 });
    const error = await suite.ledger.claimSubtask({ ...ref('A'), workerId: 'w-2', leaseMs: 30_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClaimHeld);
    expect(error).toMatchObject({ runId, subtaskId: 'A', cause: expect.objectContaining({ name: 'ConditionalCheckFailedException' }) });
    clock.set('2040-06-01T12:01:00.000Z');
    const late = await suite.ledger.reserveBudget(claim).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(DeadlinePassed);
    expect(late).toMatchObject({ cause: expect.objectContaining({ name: 'TransactionCanceledException' }) });
    expect(late).not.toBeInstanceOf(LeaseLost);
  });
});
