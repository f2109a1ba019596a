import { describe, expect, it } from 'vitest';
import { DeadlineNotReached, toRunResource } from '../../lib/ledger';
import { AwaitTooLate } from '../../lib/runtime/errors';
import { uniqueName } from '../support/aws';
import { acceptRun, deliver, deliverRun, dispatchRound, halfYearRequest, messagesOfRun, pipeline, sqsRecord, subtaskOf } from './support';

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
    const runId = await acceptRun(p.get(), tenantId, {
      ...request,
      subtasks: (request.subtasks ?? []).map((s) => ({ ...s, hedge: { afterSeconds: 20, mode: 'subdivide' as const, copies: 3 } })),
    });
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

describe('hedge', () => {
  /**
   * A run whose two quarters each declare a 3-piece subdivide hedge due 20 s after dispatch; round
   * 1's messages are taken off the queue. A piece reads every monthly statement its days touch,
   * so three pieces of a quarter need more calls than the quarter's own 4: the allowance is 8.
   */
  const hedgedRun = async () => {
    p.get().clock.moveTo(0);
    const tenantId = uniqueName('tenant');
    const request = halfYearRequest();
    const subtasks = (request.subtasks ?? []).map((s) => ({
      ...s,
      budget: { modelCalls: 8, estimatedCostPerCall: 7 },
      hedge: { afterSeconds: 20, mode: 'subdivide' as const, copies: 3 },
    }));
    const runId = await acceptRun(p.get(), tenantId, { ...request, subtasks });
    const { items } = await dispatchRound(p.get(), tenantId, runId);
    const [a] = items;
    if (a === undefined) throw new Error('round 1 dispatches A');
    const round1 = await messagesOfRun(p.get(), 'tax-statements', runId);
    expect(round1.map((m) => subtaskOf(m).subtaskId).sort()).toEqual(['A', 'B']);
    return { tenantId, runId, a, round1 };
  };

  it('starts the race once and enqueues exactly the copies; invoked twice, it writes nothing more and the second set of messages runs nothing twice', async () => {
    const { tenantId, runId, a } = await hedgedRun();
    p.get().clock.moveTo(20_000);

    const first = await p.get().deadline({ action: 'hedge', ...a, deadline: DEADLINE });
    const second = await p.get().deadline({ action: 'hedge', ...a, deadline: DEADLINE });

    expect(first).toEqual({ ...a, deadline: DEADLINE, copies: ['A.h1', 'A.h2', 'A.h3'], written: true });
    // The Step Functions retry of a step that failed after writing: same copies, nothing written.
    expect(second).toEqual({ ...a, deadline: DEADLINE, copies: ['A.h1', 'A.h2', 'A.h3'], written: false });
    // Only A's copies were enqueued (not A, not B, not B's copies); the retry enqueued them again,
    // since it cannot know whether the first call's send went through.
    const messages = await messagesOfRun(p.get(), 'tax-statements', runId);
    expect(messages.map((m) => subtaskOf(m).subtaskId).sort()).toEqual(['A.h1', 'A.h1', 'A.h2', 'A.h2', 'A.h3', 'A.h3']);
    expect(await p.get().ledger.getSubtask({ tenantId, runId, subtaskId: 'A.h4' })).toBeUndefined();

    // Both sets delivered at once: each piece is claimed and run once, and the pieces win A.
    expect(
      await deliver(
        p.get(),
        messages.map((m) => sqsRecord(p.get(), 'tax-statements', m)),
      ),
    ).toEqual({ batchItemFailures: [] });
    const pieces = await Promise.all(['A.h1', 'A.h2', 'A.h3'].map((subtaskId) => p.get().ledger.getSubtask({ tenantId, runId, subtaskId })));
    expect(pieces.map((piece) => [piece?.subtaskId, piece?.state, piece?.generation])).toEqual([
      ['A.h1', 'ok', 1],
      ['A.h2', 'ok', 1],
      ['A.h3', 'ok', 1],
    ]);
    const hedged = await p.get().ledger.getSubtask({ tenantId, runId, subtaskId: 'A' });
    expect([hedged?.state, hedged?.hedgeWinner]).toEqual(['ok', { by: 'pieces', ids: ['A.h1', 'A.h2', 'A.h3'] }]);
  });

  it('enqueues nothing once the subtask ended: the race is not started', async () => {
    const { tenantId, runId, a, round1 } = await hedgedRun();
    // A and B finish before their hedges are due.
    expect(
      await deliver(
        p.get(),
        round1.map((m) => sqsRecord(p.get(), 'tax-statements', m)),
      ),
    ).toEqual({ batchItemFailures: [] });
    expect((await p.get().ledger.getSubtask({ tenantId, runId, subtaskId: 'A' }))?.state).toBe('ok');
    p.get().clock.moveTo(20_000);

    expect(await p.get().deadline({ action: 'hedge', ...a, deadline: DEADLINE })).toEqual({ ...a, deadline: DEADLINE, copies: [], written: false });
    expect(await messagesOfRun(p.get(), 'tax-statements', runId)).toEqual([]);
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
