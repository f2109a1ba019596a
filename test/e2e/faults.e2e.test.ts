import { describe, expect, it } from 'vitest';
import type { RunRequestInput } from '../../lib/contract';
import { client, deadLettered, deliverAgain, eventually, example, runToEnd, subtask } from './target';

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('faults: cancellation, duplicate delivery, late results, poison messages', () => {
  it('cancels during a run: finished outcomes stay, the rest become cancelled, reserved usage stays charged', async () => {
    const scout = example('scout');
    // The CRM worker gets a deadline far beyond its 27 s search, so it is still running when we cancel.
    const request: RunRequestInput = {
      ...scout,
      subtasks: scout.subtasks?.map((s) => (s.id === 'C' ? { ...s, deadlineSeconds: 120 } : s)),
      policy: { ...scout.policy, retry: { timed_out: 0, invalid: 0, empty: 0 } },
    };
    const tessera = client();
    const { runId } = await tessera.createRun(request);
    await eventually(runId, (run) => run.progress.byState.ok === 4, 30_000);

    const cancelled = await tessera.cancelRun(runId);
    expect(cancelled.status).toBe('cancelled');
    const run = await tessera.waitForRun(runId, { intervalMs: 250, timeoutMs: 60_000 });

    expect(run.status).toBe('cancelled');
    expect(run.subtasks.map((s) => `${s.id}:${s.state}`)).toEqual(['A:ok', 'B:ok', 'C:cancelled', 'D:ok', 'E:ok']);
    // The CRM worker reserved its search-planning call before the slow search; it stays charged.
    expect(subtask(run, 'C').usage).toEqual({ modelCalls: 1, estimatedCost: 3 });
    expect(run.usage).toEqual({ modelCalls: 5, estimatedCost: 15 });
    expect(run.answer?.coverage).toMatchObject({
      complete: false,
      missingQuestions: ['q3'],
      degradedReason: ['C:cancelled'],
      gaps: [{ ids: ['crm:vantage'], kind: 'unread', subtaskId: 'C', reason: 'cancelled', status: 'unchecked' }],
    });
  });

  it('turns duplicate deliveries into one outcome and one charge', async () => {
    const tessera = client();
    const { runId } = await tessera.createRun(example('tax-2025'));
    await eventually(runId, (run) => run.progress.dispatched >= 4, 30_000);
    const message = { v: 1 as const, tenantId: 'acme', runId, subtaskId: 'A' };
    await Promise.all([1, 2, 3].map(() => deliverAgain('tax-statements', message)));

    const run = await tessera.waitForRun(runId, { intervalMs: 250, timeoutMs: 60_000 });
    await deliverAgain('tax-statements', message);
    await wait(2_000);
    const after = await tessera.getRun(runId);

    // Three statements, one model call each at 7: the same charge as without the duplicates.
    expect(subtask(run, 'A')).toMatchObject({ state: 'ok', usage: { modelCalls: 3, estimatedCost: 21 } });
    expect(run.usage).toEqual({ modelCalls: 12, estimatedCost: 84 });
    expect(subtask(after, 'A')).toEqual(subtask(run, 'A'));
    expect(after.usage).toEqual(run.usage);
  });

  it('keeps a result that arrives after the deadline as late evidence; the subtask stays timed_out', async () => {
    const run = await runToEnd(example('chaos-late'));
    const settled = await eventually(run.runId, (r) => (subtask(r, 'B').late?.length ?? 0) > 0);

    expect(subtask(settled, 'A').state).toBe('ok');
    const late = subtask(settled, 'B');
    expect(late.state).toBe('timed_out');
    expect(late.late).toHaveLength(1);
    expect(late.late?.[0]?.outcome).toMatchObject({ subtaskId: 'B', state: 'ok', findings: { touched: ['late'] } });
    expect(['deadline_passed', 'sealed', 'run_ended']).toContain(late.late?.[0]?.refusedBecause);
    expect(settled.answer?.coverage.degradedReason).toEqual(['B:timed_out']);
  });

  it('dead-letters a poison message and seals its subtask at the deadline with the reason', async () => {
    const request: RunRequestInput = {
      goal: 'Fault injection: one source keeps failing every delivery',
      universe: { dimension: 'ids', ids: ['healthy', 'poison'] },
      subtasks: [
        { id: 'H', worker: 'chaos', scope: { ids: ['healthy'] }, deadlineSeconds: 15, budget: { modelCalls: 1, estimatedCostPerCall: 0 } },
        {
          id: 'P',
          worker: 'chaos',
          scope: { ids: ['poison'] },
          input: { fault: 'transient' },
          deadlineSeconds: 15,
          budget: { modelCalls: 1, estimatedCostPerCall: 0 },
        },
      ],
      policy: { retry: { timed_out: 0, invalid: 0, empty: 0 }, maxRounds: 1 },
      budget: { modelCalls: 2, costLimit: 1 },
    };
    const run = await runToEnd(request);

    expect(subtask(run, 'H').state).toBe('ok');
    const poison = subtask(run, 'P');
    expect(poison.state).toBe('timed_out');
    expect(poison.reason).toContain('3 deliveries failed (last with TransientFailure); message dead-lettered');
    let found: Awaited<ReturnType<typeof deadLettered>> = [];
    for (let i = 0; i < 20 && found.length === 0; i += 1) found = await deadLettered(run.runId);
    expect(found).toEqual([{ v: 1, tenantId: 'acme', runId: run.runId, subtaskId: 'P' }]);
  });
});
