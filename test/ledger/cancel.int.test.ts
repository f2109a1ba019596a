import { describe, expect, it } from 'vitest';
import type { Answer } from '../../lib/contract';
import { RunCancelled, RunNotFound, toRunResource } from '../../lib/ledger';
import { documentClient, dynamoClient, uniqueName } from '../support/aws';
import { dispatched, ledgerFor, ledgerTestTable, okOutcome, startRun } from './support';

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
  it('keeps the finished subtask, cancels the rest, and refuses the in-flight worker afterwards', async () => {
    const { tenantId, runId, ref, claimB, resource } = await runWithOneFinished();
    clock.set('2040-06-01T12:00:10.000Z');
    await expect(suite.ledger.cancelRun(tenantId, runId)).resolves.toEqual({ status: 'cancelled', cancelledSubtaskIds: ['B', 'C'], taskTokens: ['token-B'] });

    clock.set('2040-06-01T12:00:15.000Z');
    await expect(suite.ledger.reserveBudget(claimB)).rejects.toBeInstanceOf(RunCancelled);
    const refused = suite.ledger.recordOutcome(claimB, okOutcome('B', '2025-04-01', '2025-06-27', 214));
    await expect(refused).rejects.toBeInstanceOf(RunCancelled);
    await expect(refused).rejects.toMatchObject({ keptAsLateEvidence: true });
    await expect(suite.ledger.claimSubtask({ ...ref('C'), workerId: 'w-c', leaseMs: 30_000 })).rejects.toBeInstanceOf(RunCancelled);

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
      ['C', 'cancelled', 'run cancelled at 2040-06-01T12:00:10.000Z; never claimed'],
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
  });

  it('is idempotent and still hands back the waiter tokens on a second call', async () => {
    const { tenantId, runId } = await runWithOneFinished();
    await suite.ledger.cancelRun(tenantId, runId);
    await expect(suite.ledger.cancelRun(tenantId, runId)).resolves.toEqual({ status: 'cancelled', cancelledSubtaskIds: [], taskTokens: ['token-B'] });
  });

  it('refuses an in-flight outcome by the run check even while the sweep has not reached its subtask', async () => {
    const { tenantId, runId, claimB, resource } = await runWithOneFinished();
    // The cancelling Lambda dies right after flipping the run: its sweep (a Query) never runs.
    const base = dynamoClient();
    base.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'QueryCommand') throw new Error('injected crash before the sweep');
        return next(args);
      },
      { step: 'initialize', name: 'injectCrash' },
    );
    await expect(ledgerFor({ tableName: suite.tableName, clock, client: documentClient(base) }).cancelRun(tenantId, runId)).rejects.toThrow('injected crash');
    expect((await resource()).subtasks.map((s) => s.state)).toEqual(['ok', 'running', 'pending']);

    await expect(suite.ledger.recordOutcome(claimB, okOutcome('B', '2025-04-01', '2025-06-27', 214))).rejects.toMatchObject({
      name: 'RunCancelled',
      keptAsLateEvidence: true,
    });
    await expect(suite.ledger.cancelRun(tenantId, runId)).resolves.toMatchObject({ cancelledSubtaskIds: ['B', 'C'] });
    expect((await resource()).subtasks.map((s) => s.state)).toEqual(['ok', 'cancelled', 'cancelled']);
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
    await expect(suite.ledger.cancelRun(finished.tenantId, finished.runId)).resolves.toEqual({ status: 'succeeded', cancelledSubtaskIds: [], taskTokens: [] });
    await expect(suite.ledger.cancelRun(tenantId, 'no-such-run')).rejects.toBeInstanceOf(RunNotFound);
  });
});
