import { describe, expect, it } from 'vitest';
import { createRegistry, runSubtask, TransientFailure } from '../../lib/workers';
import { chaosKind } from '../../examples/app';
import { dispatched, memoryAllowance, offlineModels } from './support/harness';

/** The `chaos` kind's faults, each as the fault-injection suites rely on it. */
const run = (input: Record<string, unknown>, options: { calls?: number; deadlineInMs?: number; lateGraceMs?: number; hedgeCopy?: boolean } = {}) =>
  runSubtask({
    subtask: {
      ...dispatched({ id: options.hedgeCopy ? 'S1.h1' : 'S1', worker: 'chaos', assigned: { ids: ['x1'] }, deadlineInMs: options.deadlineInMs ?? 10_000 }),
      ...(options.hedgeCopy ? { lineage: { kind: 'hedge' as const, of: 'S1', mode: 'replicate' as const, copy: 1 } } : {}),
      input,
      budget: { modelCalls: options.calls ?? 4, estimatedCostPerCall: 2 },
    },
    registry: createRegistry([chaosKind]),
    budget: memoryAllowance(options.calls ?? 4).port(),
    models: offlineModels(),
    ...(options.lateGraceMs === undefined ? {} : { lateGraceMs: options.lateGraceMs }),
  });

describe('the chaos worker kind', () => {
  it('makes the model calls it is asked for, then reads its ids', async () => {
    const outcome = await run({ fault: 'none', modelCalls: 2 });
    expect(outcome).toMatchObject({ state: 'ok', usage: { modelCalls: 2, estimatedCost: 4 }, findings: { touched: ['x1'] } });
  });

  it('ends invalid when its model calls exceed the allowance', async () => {
    const outcome = await run({ fault: 'none', modelCalls: 3 }, { calls: 2 });
    expect(outcome.state).toBe('invalid');
    expect(outcome.usage?.modelCalls).toBe(2);
  });

  it('fails transiently until recoversAt, and succeeds from then on', async () => {
    await expect(run({ fault: 'transient', recoversAt: new Date(Date.now() + 60_000).toISOString() })).rejects.toBeInstanceOf(TransientFailure);
    await expect(run({ fault: 'transient' })).rejects.toBeInstanceOf(TransientFailure);
    expect((await run({ fault: 'transient', recoversAt: new Date(Date.now() - 1).toISOString() })).state).toBe('ok');
  });

  it('slowOriginalSeconds: the subtask as planned waits after its model calls; a hedge copy (lineage hedge) does not', async () => {
    const started = Date.now();
    const original = await run({ modelCalls: 1, slowOriginalSeconds: 1 });
    expect(original).toMatchObject({ state: 'ok', usage: { modelCalls: 1 }, findings: { touched: ['x1'] } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    // A copy that waited 60 s would miss its 2 s deadline (and this test's timeout): it ends ok at once.
    const copy = await run({ modelCalls: 1, slowOriginalSeconds: 60 }, { deadlineInMs: 2_000, hedgeCopy: true });
    expect(copy).toMatchObject({ state: 'ok', usage: { modelCalls: 1 }, findings: { touched: ['x1'] } });
  });

  it('crashes after claiming: silent until past its deadline, so nothing but timed_out is recorded', async () => {
    const started = Date.now();
    // The worker Lambda waits 5 s past the deadline for a late result; a crash never hands one in.
    const outcome = await run({ fault: 'crash' }, { deadlineInMs: 300, lateGraceMs: 5_000 });
    expect(outcome.state).toBe('timed_out');
    expect(outcome.findings).toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_300);
  });
});
