import { describe, expect, it } from 'vitest';
import type { Answer } from '../../lib/contract';
import { RunCancelled, RunNotFound, toRunResource } from '../../lib/ledger';
import { uniqueName } from '../support/aws';
import { dispatched, ledgerTestTable, okOutcome, startRun } from './support';

const suite = ledgerTestTable('ledger-cancel');
const { clock } = suite;

/** Quarters A, B, C: A finished ok after one call, B running with one call reserved and a waiter, C never claimed. */
const runWithOneFinished = async () => {
  const tenantId = uniqueName('tenant');
  const runId = await startRun(suite.ledger, tenantId, [
    dispatched('A', '2025-01-01', '2025-04-01'),
    dispatched('B', '2025-04-01', '2025-07-01'),
    dispatched('C', '2025-07-01', '2025-10-01'),
  ]);
  const ref = (subtaskId: string) => ({ tenantId, runId, subtaskId });
  const claimA = await suite.ledger.claimSubtask({ ...ref('A'), workerId: 'w-a', leaseMs: 30_000 });
  await suite.ledger.reserveBudget(claimA);
  await suite.ledger.recordOutcome(claimA, okOutcome('A', '2025-01-02', '2025-03-31', 180));
  const claimB = await suite.ledger.claimSubtask({ ...ref('B'), workerId: 'w-b', leaseMs: 30_000 });
  await suite.ledger.reserveBudget(claimB);
  await suite.ledger.registerWaiter({ ...ref('B'), taskToken: 'token-B' });
  const resource = async () => toRunResource((await suite.ledger.getRun(tenantId, runId))!);
  return { tenantId, runId, ref, claimB, resource };
};

const answer: Answer = {
  text: 'Cancelled before the total was complete.',
  result: {},
  coverage: {
    complete: false,
    missingQuestions: ['q1'],
    degradedReason: ['B:cancelled', 'C:cancelled'],
    partitions: 3,
    overlaps: [],
    gaps: [],
    problems: [],
    statement: 'Coverage: one of three partitions.',
  },
};

describe('cancelRun', () => {
  it('keeps the finished subtask, shows the rest cancelled at once, and refuses the in-flight worker afterwards', async () => {
    const { tenantId, runId, ref, claimB, resource } = await runWithOneFinished();
    clock.set('2040-06-01T12:00:10.000Z');
    await expect(suite.ledger.cancelRun(tenantId, runId)).resolves.toEqual({ status: 'cancelled', answered: false });

    clock.set('2040-06-01T12:00:15.000Z');
    await expect(suite.ledger.reserveBudget(claimB)).rejects.toBeInstanceOf(RunCancelled);
    const refused = suite.ledger.recordOutcome(claimB, okOutcome('B', '2025-04-01', '2025-06-27', 214));
    await expect(refused).rejects.toBeInstanceOf(RunCancelled);
    await expect(refused).rejects.toMatchObject({ keptAsLateEvidence: true });
    // C is still pending in the table until the closing sweeps it: a claim gets it, its first reservation does not.
    const claimC = await suite.ledger.claimSubtask({ ...ref('C'), workerId: 'w-c', leaseMs: 30_000 });
    await expect(suite.ledger.reserveBudget(claimC)).rejects.toBeInstanceOf(RunCancelled);

    const view = await resource();
    expect(view.status).toBe('cancelled');
    expect(view.subtasks.map((s) => [s.id, s.state, s.reason])).toEqual([
      ['A', 'ok', undefined],
      // B's worker handed its result in at 12:00:15, after the cancel: kept as late evidence, and the reason says so.
      [
        'B',
        'cancelled',
        'run cancelled at 2040-06-01T12:00:10.000Z; claimed by generation 1 (worker w-b); its result arrived late at 2040-06-01T12:00:15.000Z and is kept as late evidence',
      ],
      ['C', 'cancelled', 'run cancelled at 2040-06-01T12:00:10.000Z; claimed by generation 1 (worker w-c) but no result arrived'],
    ]);
    expect(view.subtasks[0]?.observed).toEqual({ minDate: '2025-01-02', maxDate: '2025-03-31', recordCount: 180 });
    expect(view.usage).toEqual({ modelCalls: 2, estimatedCost: 14 });
    expect(view.subtasks[1]?.usage).toEqual({ modelCalls: 1, estimatedCost: 7 });
    expect(view.subtasks[1]?.late).toEqual([
      expect.objectContaining({
        receivedAt: '2040-06-01T12:00:15.000Z',
        generation: 1,
        refusedBecause: 'cancelled',
        outcome: expect.objectContaining({ state: 'ok' }),
      }),
    ]);
    expect(view.progress.byState).toMatchObject({ ok: 1, cancelled: 2, pending: 0, running: 0 });
    // Reconcile reads the same: an outcome per subtask, the two open ones cancelled.
    const read = await suite.ledger.readManifest(tenantId, runId);
    expect(read.outcomes.map((o) => [o.subtaskId, o.state])).toEqual([
      ['A', 'ok'],
      ['B', 'cancelled'],
      ['C', 'cancelled'],
    ]);
    expect(read.unfinished).toEqual([]);
  });

  it('writes no subtask item: the closing sweeps the open ones, with their waiters, after storing the answer', async () => {
    const { tenantId, runId, ref } = await runWithOneFinished();
    await suite.ledger.cancelRun(tenantId, runId);
    expect((await suite.ledger.getSubtask(ref('B')))?.state).toBe('running');
    expect((await suite.ledger.getSubtask(ref('C')))?.state).toBe('pending');

    await expect(suite.ledger.finishRun({ tenantId, runId, status: 'cancelled', answer })).resolves.toEqual({
      status: 'cancelled',
      cancelledSubtaskIds: ['B', 'C'],
      taskTokens: ['token-B'],
    });
    const stored = await Promise.all(['A', 'B', 'C'].map((id) => suite.ledger.getSubtask(ref(id))));
    expect(stored.map((item) => [item?.state, item?.closedBy])).toEqual([
      ['ok', undefined],
      ['cancelled', 'run_cancelled'],
      ['cancelled', 'run_cancelled'],
    ]);
  });

  it('is idempotent, and says once the run carries its answer', async () => {
    const { tenantId, runId } = await runWithOneFinished();
    await suite.ledger.cancelRun(tenantId, runId);
    await expect(suite.ledger.cancelRun(tenantId, runId)).resolves.toEqual({ status: 'cancelled', answered: false });
    await suite.ledger.finishRun({ tenantId, runId, status: 'cancelled', answer });
    await expect(suite.ledger.cancelRun(tenantId, runId)).resolves.toEqual({ status: 'cancelled', answered: true });
  });

  it('leaves an ended run as it ended, stores the answer of a cancelled one, and knows unknown runs', async () => {
    const { tenantId, runId, resource } = await runWithOneFinished();
    await suite.ledger.cancelRun(tenantId, runId);
    await expect(suite.ledger.finishRun({ tenantId, runId, status: 'failed', answer })).resolves.toMatchObject({ status: 'cancelled' });
    const view = await resource();
    expect(view.status).toBe('cancelled');
    expect(view.answer?.coverage.statement).toBe('Coverage: one of three partitions.');

    const finished = await runWithOneFinished();
    await suite.ledger.finishRun({ tenantId: finished.tenantId, runId: finished.runId, status: 'succeeded', answer });
    await expect(suite.ledger.cancelRun(finished.tenantId, finished.runId)).resolves.toEqual({ status: 'succeeded', answered: true });
    await expect(suite.ledger.cancelRun(tenantId, 'no-such-run')).rejects.toBeInstanceOf(RunNotFound);
  });
});
