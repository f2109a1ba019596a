import { describe, expect, it } from 'vitest';
import { DeadlineNotReached, toRunResource } from '../../lib/ledger';
import { AwaitTooLate } from '../../lib/runtime/errors';
import { uniqueName } from '../support/aws';
import { acceptRun, deliverRun, dispatchRound, halfYearRequest, pipeline } from './support';

/**
 * One Map iteration's three steps (arm, await, seal) against the ledger, judged by a clock the
 * test moves. Every subtask here is dispatched at T0 with 60 s, so its deadline is 12:01:00.000Z.
 */
const p = pipeline('fn-deadline');
const DEADLINE = '2040-06-01T12:01:00.000Z';

/** A run dispatched at T0; returns the Map's items by subtask id. */
const dispatchedRun = async () => {
  p.get().clock.moveTo(0);
  const tenantId = uniqueName('tenant');
  const runId = await acceptRun(p.get(), tenantId, halfYearRequest());
  const { items } = await dispatchRound(p.get(), tenantId, runId);
  const [a, b] = items;
  if (a?.subtaskId !== 'A' || b?.subtaskId !== 'B') throw new Error('round 1 dispatches A then B');
  return { tenantId, runId, a, b };
};

const token = (runId: string, subtaskId: string) => `token-${runId}-${subtaskId}`;
const releasesOf = (runId: string) => p.get().calls.release.filter((call) => call.taskToken.startsWith(`token-${runId}-`));

describe('arm', () => {
  it('waits the remaining seconds to the same instant, rounded up, however late the iteration starts', async () => {
    const { a, b } = await dispatchedRun();

    p.get().clock.moveTo(20_500);
    expect(await p.get().deadline({ action: 'arm', ...a })).toEqual({ status: 'waiting', ...a, deadline: DEADLINE, timeoutSeconds: 40 });
    // An iteration held back by Map concurrency until 0.999 s before the deadline still ends on it.
    p.get().clock.moveTo(59_001);
    expect(await p.get().deadline({ action: 'arm', ...b })).toEqual({ status: 'waiting', ...b, deadline: DEADLINE, timeoutSeconds: 1 });
  });

  it('says when a hedge is due, from the dispatch instant, until its copies are started', async () => {
    p.get().clock.moveTo(0);
    const tenantId = uniqueName('tenant');
    const request = halfYearRequest();
    const runId = await acceptRun(p.get(), tenantId, { ...request, subtasks: (request.subtasks ?? []).map((s) => ({ ...s, hedge: { afterSeconds: 20, mode: 'subdivide' as const, copies: 3 } })) });
    const { items } = await dispatchRound(p.get(), tenantId, runId);
    const [a] = items;
    if (a === undefined) throw new Error('round 1 dispatches A');
    p.get().clock.moveTo(5_500);
    expect(await p.get().deadline({ action: 'arm', ...a })).toEqual({ status: 'waiting', ...a, deadline: DEADLINE, timeoutSeconds: 55, hedgeSeconds: 15 });
    p.get().clock.moveTo(25_000);
    expect(await p.get().deadline({ action: 'arm', ...a })).toEqual({ status: 'waiting', ...a, deadline: DEADLINE, timeoutSeconds: 35, hedgeSeconds: 0 });
    await p.get().ledger.startHedge({ tenantId, runId, subtaskId: 'A' });
    expect(await p.get().deadline({ action: 'arm', ...a })).toEqual({ status: 'waiting', ...a, deadline: DEADLINE, timeoutSeconds: 35 });
  });

  it('goes straight to the seal once the deadline has come', async () => {
    const { a } = await dispatchedRun();
    p.get().clock.moveTo(60_000);
    expect(await p.get().deadline({ action: 'arm', ...a })).toEqual({ status: 'expired', ...a });
  });

  it('is done at once for a subtask that already ended', async () => {
    const { runId, a } = await dispatchedRun();
    await deliverRun(p.get(), 'tax-statements', runId, ['A']);
    p.get().clock.moveTo(30_000);
    expect(await p.get().deadline({ action: 'arm', ...a })).toEqual({ status: 'terminal', ...a, state: 'ok' });
  });
});

describe('await', () => {
  it('leaves the token on a live subtask for the worker to answer', async () => {
    const { tenantId, runId, b } = await dispatchedRun();
    p.get().clock.moveTo(1_000);

    expect(await p.get().deadline({ action: 'await', ...b, taskToken: token(runId, 'B'), timeoutSeconds: 59 })).toEqual({ registered: true });
    expect((await p.get().ledger.getSubtask({ tenantId, runId, subtaskId: 'B' }))?.taskToken).toBe(token(runId, 'B'));
    expect(releasesOf(runId)).toEqual([]);
  });

  it('answers its own token at once when the worker finished first', async () => {
    const { tenantId, runId, a } = await dispatchedRun();
    await deliverRun(p.get(), 'tax-statements', runId, ['A']);

    expect(await p.get().deadline({ action: 'await', ...a, taskToken: token(runId, 'A') })).toEqual({ registered: false });
    expect(releasesOf(runId)).toEqual([{ taskToken: token(runId, 'A'), output: { subtaskId: 'A', state: 'ok' } }]);
    expect((await p.get().ledger.getSubtask({ tenantId, runId, subtaskId: 'A' }))?.taskToken).toBeUndefined();
  });

  it('refuses to wait past the deadline, so the state machine seals instead', async () => {
    const { runId, a } = await dispatchedRun();
    p.get().clock.moveTo(60_000);
    await expect(p.get().deadline({ action: 'await', ...a, taskToken: token(runId, 'A') })).rejects.toBeInstanceOf(AwaitTooLate);
  });
});

describe('seal', () => {
  it('seals a live subtask timed_out after its deadline, with the reason', async () => {
    const { tenantId, runId, b } = await dispatchedRun();
    p.get().clock.moveTo(60_000);

    expect(await p.get().deadline({ action: 'seal', ...b })).toEqual({ subtaskId: 'B', sealed: true, state: 'timed_out' });
    const record = await p.get().ledger.getRun(tenantId, runId);
    if (!record) throw new Error('the run exists');
    expect(toRunResource(record).subtasks.find((s) => s.id === 'B')).toMatchObject({
      state: 'timed_out',
      reason: `deadline ${DEADLINE} passed; never claimed: no worker picked it up`,
    });
  });

  it('leaves a subtask that already ended as it ended', async () => {
    const { tenantId, runId, a } = await dispatchedRun();
    await deliverRun(p.get(), 'tax-statements', runId, ['A']);
    p.get().clock.moveTo(61_000);

    expect(await p.get().deadline({ action: 'seal', ...a })).toEqual({ subtaskId: 'A', sealed: false, state: 'ok' });
    expect((await p.get().ledger.getSubtask({ tenantId, runId, subtaskId: 'A' }))?.state).toBe('ok');
  });

  it('refuses to seal before the deadline: timed_out must mean the deadline passed', async () => {
    const { b } = await dispatchedRun();
    p.get().clock.moveTo(59_999);
    await expect(p.get().deadline({ action: 'seal', ...b })).rejects.toBeInstanceOf(DeadlineNotReached);
  });
});
