import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CheckpointInput } from '../../lib/contract';
import { DeadlinePassed, InvalidLedgerInput, LeaseLost, toOutcome, toRunResource, type Claim } from '../../lib/ledger';
import { uniqueName } from '../support/aws';
import { dispatched, ledgerTestTable, startRun } from './support';

const suite = ledgerTestTable('ledger-checkpoints');
const { clock } = suite;

/** A run with quarter B of 2025, due at 12:01:00 (the suite clock starts at 12:00:00). */
const quarterB = async () => {
  const tenantId = uniqueName('tenant');
  const runId = await startRun(suite.ledger, tenantId, [dispatched('B', '2025-04-01', '2025-07-01')]);
  return { tenantId, runId, subtaskId: 'B' };
};

/** B's checkpoint after `months` monthly statements from April (6 transactions each). */
const afterMonths = (claim: Claim, sequence: number, months: number, partial = false): CheckpointInput => {
  const end = ['2025-04-01', '2025-05-01', '2025-06-01', '2025-07-01'][months] as string;
  const covered = [{ from: '2025-04-01', toExclusive: end }];
  const observed = { minDate: '2025-04-01', maxDate: ['2025-04-01', '2025-04-30', '2025-05-31', '2025-06-27'][months] as string, recordCount: 6 * months };
  return {
    generation: claim.generation,
    sequence,
    writtenAt: '2040-06-01T12:00:05.000Z',
    covered,
    observed,
    sources: [],
    sourcesReached: months,
    usage: { modelCalls: months, estimatedCost: 7 * months },
    ...(partial ? { partial: { covered, observed, findings: { totalDeductiblePence: 14999 } } } : {}),
  };
};

describe('writeCheckpoint', () => {
  it('stores the latest checkpoint, keeps it through the seal, and the timed-out outcome carries it', async () => {
    const ref = await quarterB();
    const claim = await suite.ledger.claimSubtask({ ...ref, workerId: 'w-1', leaseMs: 120_000 });
    await expect(suite.ledger.writeCheckpoint(claim, afterMonths(claim, 1, 1))).resolves.toEqual({ written: true });
    await expect(suite.ledger.writeCheckpoint(claim, afterMonths(claim, 2, 2, true))).resolves.toEqual({ written: true });
    // A retried or overtaken write never replaces a later one.
    await expect(suite.ledger.writeCheckpoint(claim, afterMonths(claim, 1, 1))).resolves.toEqual({ written: false });

    const running = toRunResource((await suite.ledger.getRun(ref.tenantId, ref.runId))!);
    expect(running.subtasks[0]?.checkpoint?.covered).toEqual([{ from: '2025-04-01', toExclusive: '2025-06-01' }]);

    clock.advance(61_000);
    await expect(suite.ledger.writeCheckpoint(claim, afterMonths(claim, 3, 3, true))).rejects.toBeInstanceOf(DeadlinePassed);
    await suite.ledger.sealTimedOut(ref);
    const item = await suite.ledger.getSubtask(ref);
    const outcome = toOutcome(item!);
    expect(outcome?.state).toBe('timed_out');
    expect(outcome?.checkpoint).toMatchObject({ generation: 1, sequence: 2, partial: { findings: { totalDeductiblePence: 14999 } } });
  });

  it("refuses a stale generation's checkpoint, and hands the replacement the last one to resume from", async () => {
    const ref = await quarterB();
    const first = await suite.ledger.claimSubtask({ ...ref, workerId: 'w-old', leaseMs: 10_000 });
    await suite.ledger.writeCheckpoint(first, afterMonths(first, 1, 1, true));
    clock.advance(11_000);
    // The lease ran out before anyone claimed again: still refused.
    await expect(suite.ledger.writeCheckpoint(first, afterMonths(first, 2, 2, true))).rejects.toMatchObject({ name: 'LeaseLost', reason: 'lease_expired' });
    const second = await suite.ledger.claimSubtask({ ...ref, workerId: 'w-new', leaseMs: 10_000 });
    expect(second.generation).toBe(2);
    expect(second.checkpoint).toMatchObject({ generation: 1, sequence: 1, covered: [{ from: '2025-04-01', toExclusive: '2025-05-01' }] });
    await expect(suite.ledger.writeCheckpoint(first, afterMonths(first, 3, 2, true))).rejects.toMatchObject({ name: 'LeaseLost', reason: 'superseded' });
    await expect(suite.ledger.writeCheckpoint(second, afterMonths(second, 2, 2, true))).resolves.toEqual({ written: true });
  });

  it('refuses a checkpoint of another generation than its claim, and one past the per-subtask maximum', async () => {
    const ref = await quarterB();
    const claim = await suite.ledger.claimSubtask({ ...ref, workerId: 'w-1', leaseMs: 60_000 });
    await expect(suite.ledger.writeCheckpoint(claim, { ...afterMonths(claim, 1, 1), generation: 2 })).rejects.toBeInstanceOf(InvalidLedgerInput);
    await expect(suite.ledger.writeCheckpoint(claim, afterMonths(claim, 33, 1))).rejects.toMatchObject({
      name: 'InvalidLedgerInput',
      issues: ['sequence 33 is past the 32 checkpoints a subtask may store'],
    });
  });

  it('property: over random claims, crashes and writes, the stored checkpoint is always the latest accepted write of a current generation', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom('write', 'stale', 'crash'), { minLength: 1, maxLength: 8 }), async (steps) => {
        const ref = await quarterB();
        const claims: Claim[] = [await suite.ledger.claimSubtask({ ...ref, workerId: 'w-0', leaseMs: 1_000 })];
        let sequence = 0;
        let accepted: { generation: number; sequence: number } | undefined;
        for (const step of steps) {
          const current = claims[claims.length - 1] as Claim;
          if (step === 'crash') {
            clock.advance(1_001);
            claims.push(await suite.ledger.claimSubtask({ ...ref, workerId: `w-${claims.length}`, leaseMs: 1_000 }));
            continue;
          }
          const writer = step === 'stale' ? claims[claims.length - 2] : current;
          if (writer === undefined) continue;
          sequence += 1;
          const write = suite.ledger.writeCheckpoint(writer, afterMonths(writer, sequence, 1));
          if (writer === current) {
            await expect(write).resolves.toEqual({ written: true });
            accepted = { generation: writer.generation, sequence };
          } else await expect(write).rejects.toBeInstanceOf(LeaseLost);
        }
        const item = await suite.ledger.getSubtask(ref);
        expect(item?.checkpoint === undefined ? undefined : { generation: item.checkpoint.generation, sequence: item.checkpoint.sequence }).toEqual(accepted);
      }),
      { numRuns: 15 },
    );
  });
});
