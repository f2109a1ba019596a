import { describe, expect, it } from 'vitest';
import { InvalidTaskInput, PlanRejected } from '../../lib/runtime/errors';
import { uniqueName } from '../support/aws';
import { acceptedForDispatch, at, callApi, deliverRun, dispatchRound, halfYearRequest, messagesOfRun, pipeline, subtaskOf } from './support';

/**
 * The Dispatch task over the real planner, ledger and queues: round 1 of a stored request becomes
 * a manifest, one message per subtask on its kind's queue, and the items the Map waits on, each
 * with its absolute deadline.
 */
const p = pipeline('fn-dispatch');

/** Accepted at T0, dispatched 2.5 s later. */
const acceptedRun = () => acceptedForDispatch(p.get());

const sortedSubtaskIds = async (runId: string) => (await messagesOfRun(p.get(), 'tax-statements', runId)).map((message) => subtaskOf(message).subtaskId).sort();

describe('dispatch, round 1', () => {
  it('writes the planned manifest, enqueues each subtask on its kind’s queue and returns absolute deadlines', async () => {
    const { tenantId, runId } = await acceptedRun();

    const output = await dispatchRound(p.get(), tenantId, runId);

    // Dispatched at T0 + 2.5 s: A's 60 s end at T0 + 62.5 s, B's 90 s at T0 + 92.5 s.
    expect(output).toEqual({
      runId,
      tenantId,
      round: 1,
      // Two subtasks make one batch of the default 500; its LoadBatch answers the items.
      batches: [{ round: 1, batch: 0 }],
      items: [
        { runId, tenantId, subtaskId: 'A', deadline: '2040-06-01T12:01:02.500Z' },
        { runId, tenantId, subtaskId: 'B', deadline: '2040-06-01T12:01:32.500Z' },
      ],
    });
    const { manifest, unfinished } = await p.get().ledger.readManifest(tenantId, runId);
    expect(manifest.subtasks.map((s) => ({ id: s.id, round: s.round, assigned: s.assigned, deadline: s.deadline }))).toEqual([
      { id: 'A', round: 1, assigned: { from: '2025-01-01', toExclusive: '2025-04-01' }, deadline: '2040-06-01T12:01:02.500Z' },
      { id: 'B', round: 1, assigned: { from: '2025-04-01', toExclusive: '2025-07-01' }, deadline: '2040-06-01T12:01:32.500Z' },
    ]);
    expect(unfinished).toEqual(['A', 'B']);

    const messages = await messagesOfRun(p.get(), 'tax-statements', runId);
    expect(messages.map(subtaskOf).sort((x, y) => x.subtaskId.localeCompare(y.subtaskId))).toEqual([
      { v: 1, tenantId, runId, subtaskId: 'A' },
      { v: 1, tenantId, runId, subtaskId: 'B' },
    ]);
    expect(await messagesOfRun(p.get(), 'transaction-feed', runId)).toEqual([]);
  });

  it('answers a retried Task with the same items and deadlines, writing nothing new but enqueuing again', async () => {
    const { tenantId, runId } = await acceptedRun();
    const first = await dispatchRound(p.get(), tenantId, runId);
    await messagesOfRun(p.get(), 'tax-statements', runId);
    const stored = await p.get().ledger.getRun(tenantId, runId);

    // Step Functions retries the Task 7 s later (the first attempt's answer was lost).
    p.get().clock.moveTo(9_500);
    const retry = await dispatchRound(p.get(), tenantId, runId);

    expect(retry).toEqual(first);
    expect(retry.items.map((item) => item.deadline)).toEqual(['2040-06-01T12:01:02.500Z', '2040-06-01T12:01:32.500Z']);
    expect(await p.get().ledger.getRun(tenantId, runId)).toEqual(stored);
    expect(stored?.run).toMatchObject({ round: 1, roundSizes: [2], updatedAt: at(2_500) });
    // At least once: a crash between the manifest and the queue must not lose a subtask.
    expect(await sortedSubtaskIds(runId)).toEqual(['A', 'B']);
  });

  it('dispatches nothing for a cancelled run', async () => {
    const { tenantId, runId } = await acceptedRun();
    const cancel = await callApi(p.get(), { routeKey: 'POST /runs/{runId}/cancel', tenant: tenantId, runId });
    expect(cancel.statusCode).toBe(200);

    expect(await dispatchRound(p.get(), tenantId, runId)).toEqual({ runId, tenantId, round: 1, batches: [], items: [] });
    expect((await p.get().ledger.getRun(tenantId, runId))?.subtasks).toEqual([]);
    expect(await sortedSubtaskIds(runId)).toEqual([]);
  });

  it('fails the Task when the run was stored without its plan: Dispatch never plans a request', async () => {
    const tenantId = uniqueName('tenant');
    const runId = uniqueName('run');
    await p.get().ledger.createRun({ tenantId, runId, request: halfYearRequest() });

    await expect(dispatchRound(p.get(), tenantId, runId)).rejects.toThrow(`run ${runId} cannot be planned: the run was stored without its plan`);
    expect((await p.get().ledger.getRun(tenantId, runId))?.run.round).toBe(0);
  });

  it('fails the Task, naming the run, when the run does not exist', async () => {
    const attempt = p.get().dispatch({ runId: 'no-such-run', tenantId: uniqueName('tenant'), round: 1 });
    await expect(attempt).rejects.toBeInstanceOf(PlanRejected);
    await expect(attempt).rejects.toThrow('run no-such-run cannot be planned: the run does not exist');
  });

  it('refuses a malformed Task input before touching anything', async () => {
    await expect(p.get().dispatch({ runId: 'r', tenantId: 't', round: 0 })).rejects.toBeInstanceOf(InvalidTaskInput);
  });
});

describe('dispatch, a later round', () => {
  it('answers a retried round-2 Task with the round it already committed', async () => {
    const { tenantId, runId } = await acceptedRun();
    await dispatchRound(p.get(), tenantId, runId);
    await deliverRun(p.get(), 'tax-statements', runId);
    // Reconcile decides round 2 at T0 + 10 s and stores it; Dispatch sends it a second later.
    p.get().clock.moveTo(10_000);
    expect(await p.get().reconcile({ mode: 'reconcile', runId, tenantId, round: 1 })).toMatchObject({ next: 'dispatch', round: 2 });
    p.get().clock.moveTo(11_000);
    const first = await dispatchRound(p.get(), tenantId, runId, 2);
    // B's statements end on 2025-06-27: the feed re-checks the rest of June, 90 s from T0 + 10 s.
    expect(first.items).toEqual([{ runId, tenantId, subtaskId: 'B.g1', deadline: '2040-06-01T12:01:40.000Z' }]);
    const stored = await p.get().ledger.getRun(tenantId, runId);

    // The first attempt committed round 2, then its answer was lost (or enqueueing failed).
    p.get().clock.moveTo(15_000);
    const retry = await dispatchRound(p.get(), tenantId, runId, 2);

    expect(retry).toEqual(first);
    expect(await p.get().ledger.getRun(tenantId, runId)).toEqual(stored);
  });
});

describe('dispatch sends only what was stored', () => {
  it('fails a round-2 Task whose round Reconcile did not store, writing and enqueuing nothing', async () => {
    const { tenantId, runId } = await acceptedRun();
    await dispatchRound(p.get(), tenantId, runId);
    const before = await p.get().ledger.getRun(tenantId, runId);

    await expect(dispatchRound(p.get(), tenantId, runId, 2)).rejects.toThrow(
      `run ${runId} cannot be planned: round 2 was not stored: Reconcile appends a round before it asks for its dispatch`,
    );
    expect(await p.get().ledger.getRun(tenantId, runId)).toEqual(before);
  });
});
