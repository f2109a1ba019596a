import type { Message } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { runUsage } from '../../lib/ledger';
import { uniqueName } from '../support/aws';
import {
  acceptRun,
  callApi,
  halfYearRequest,
  deliver,
  dispatchRound,
  messagesOfRun,
  pipeline,
  receiveAll,
  secondQuarterRequest,
  sendRaw,
  sqsRecord,
  subtaskOf,
} from './support';

/**
 * The worker Lambda over the real ledger, the reference tax kinds and the offline model, fed SQS
 * events built from messages Dispatch really enqueued. The fixture's June statement closes on the
 * 27th; Q2 holds 18 transactions, 6 of them deductible, 23,499 pence in all; one model call per
 * statement at 7 per call makes Q2 cost 3 calls and 21.
 */
const p = pipeline('fn-worker');

const Q2_FINDINGS = { currency: 'GBP', totalDeductiblePence: 23_499, transactions: 18, deductibleTransactions: 6 };

/** A Q2 run, dispatched at T0, with the messages Dispatch enqueued for it. */
const dispatchedRun = async (dispatches = 1) => {
  p.get().clock.moveTo(0);
  const tenantId = uniqueName('tenant');
  const runId = await acceptRun(p.get(), tenantId, secondQuarterRequest());
  for (let i = 0; i < dispatches; i += 1) await dispatchRound(p.get(), tenantId, runId);
  const messages = await messagesOfRun(p.get(), 'tax-statements', runId);
  return { tenantId, runId, messages };
};

const recordsOf = (messages: readonly Message[]) => messages.map((message) => sqsRecord(p.get(), 'tax-statements', message));

/** What the ledger holds for the run: outcomes, usage, and B as the API shows it. */
const stateOf = async (tenantId: string, runId: string) => {
  const read = await p.get().ledger.readManifest(tenantId, runId);
  const record = await p.get().ledger.getRun(tenantId, runId);
  const tenantDay = await p.get().ledger.tenantUsage(tenantId);
  return { outcomes: read.outcomes, usage: runUsage(read.run), tenantCalls: tenantDay.modelCalls, b: record?.subtasks[0], late: record?.late ?? [] };
};

describe('worker', () => {
  it('records B as ok with the range its data covered, charges 3 calls / 21, and answers the waiting Map', async () => {
    const { tenantId, runId, messages } = await dispatchedRun();
    const [item] = (await p.get().ledger.readManifest(tenantId, runId)).manifest.subtasks;
    await p.get().deadline({ action: 'await', runId, tenantId, subtaskId: 'B', deadline: item?.deadline ?? '', taskToken: `token-${runId}` });

    expect(await deliver(p.get(), recordsOf(messages))).toEqual({ batchItemFailures: [] });

    const { outcomes, usage } = await stateOf(tenantId, runId);
    expect(outcomes).toEqual([
      {
        subtaskId: 'B',
        state: 'ok',
        observed: { minDate: '2025-04-01', maxDate: '2025-06-27', recordCount: 18 },
        sources: ['stmt-2025-04', 'stmt-2025-05', 'stmt-2025-06'],
        sourcesReached: 3,
        findings: Q2_FINDINGS,
        usage: { modelCalls: 3, estimatedCost: 21 },
        refusals: [],
      },
    ]);
    expect(usage).toEqual({ modelCalls: 3, estimatedCost: 21 });
    expect(p.get().calls.release.filter((call) => call.taskToken === `token-${runId}`)).toEqual([
      { taskToken: `token-${runId}`, output: { subtaskId: 'B', state: 'ok' } },
    ]);
  });

  it('runs a subtask enqueued twice in one batch once: one outcome, one charge, no failure', async () => {
    // A retried Dispatch enqueues B again: two messages, one subtask.
    const { tenantId, runId, messages } = await dispatchedRun(2);
    expect(messages.map((m) => subtaskOf(m).subtaskId)).toEqual(['B', 'B']);

    expect(await deliver(p.get(), recordsOf(messages))).toEqual({ batchItemFailures: [] });

    const { outcomes, usage, tenantCalls, late } = await stateOf(tenantId, runId);
    expect(outcomes.map((o) => [o.subtaskId, o.state, o.usage])).toEqual([['B', 'ok', { modelCalls: 3, estimatedCost: 21 }]]);
    expect(usage).toEqual({ modelCalls: 3, estimatedCost: 21 });
    expect(tenantCalls).toBe(3);
    expect(late).toEqual([]);
  });

  it('acknowledges a redelivery of a finished subtask without running it again', async () => {
    const { tenantId, runId, messages } = await dispatchedRun();
    const [record] = recordsOf(messages);
    if (!record) throw new Error('B was enqueued');
    await deliver(p.get(), [record]);

    // The same message again, as SQS redelivers it after a lost delete.
    const again = { ...record, attributes: { ...record.attributes, ApproximateReceiveCount: '2' } };
    expect(await deliver(p.get(), [again])).toEqual({ batchItemFailures: [] });

    const { outcomes, usage, tenantCalls, b } = await stateOf(tenantId, runId);
    expect(outcomes.map((o) => [o.subtaskId, o.state])).toEqual([['B', 'ok']]);
    expect(usage).toEqual({ modelCalls: 3, estimatedCost: 21 });
    expect(tenantCalls).toBe(3);
    expect(b?.generation).toBe(1);
  });

  it('reports only the unreadable messages of a batch as failures; their sibling succeeds', async () => {
    const notJson = '{"v":1,"tenantId":';
    const wrongVersion = JSON.stringify({ v: 2, runId: 'r', tenantId: 't', subtaskId: 'B' });
    const { tenantId, runId } = await dispatchedRun(0);
    await sendRaw(p.get(), 'tax-statements', notJson);
    await sendRaw(p.get(), 'tax-statements', wrongVersion);
    await dispatchRound(p.get(), tenantId, runId);
    const batch = (await receiveAll(p.get().queues['tax-statements'].url)).filter(
      (m) => [notJson, wrongVersion].includes(m.Body ?? '') || m.Body?.includes(runId),
    );
    expect(batch).toHaveLength(3);
    const idOf = (body: string) => batch.find((m) => m.Body === body)?.MessageId;

    const response = await deliver(p.get(), recordsOf(batch));

    expect(response.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual([idOf(notJson), idOf(wrongVersion)].sort());
    const { outcomes } = await stateOf(tenantId, runId);
    expect(outcomes.map((o) => [o.subtaskId, o.state, o.findings])).toEqual([['B', 'ok', Q2_FINDINGS]]);
  });

  it('fails the invocation with FullBatchFailure when no message of the batch could be delivered', async () => {
    // Unterminated JSON, unique to this test: an unreadable message of another test may come back.
    const notJson = `{"v":1,"tenantId":"${uniqueName('tenant')}",`;
    const queue = p.get().queues['tax-statements'].url;
    await sendRaw(p.get(), 'tax-statements', notJson);
    const batch = (await receiveAll(queue)).filter((m) => m.Body === notJson);
    expect(batch).toHaveLength(1);

    await expect(deliver(p.get(), recordsOf(batch))).rejects.toMatchObject({ name: 'FullBatchFailure', records: 1 });
  });

  it('records invalid, still charged, when the run budget runs out before the last statement', async () => {
    p.get().clock.moveTo(0);
    const tenantId = uniqueName('tenant');
    // Five calls for the run, within each subtask's own four; each quarter needs three (one per
    // statement). A runs first and spends three, so B's third statement finds the run spent.
    const runId = await acceptRun(p.get(), tenantId, halfYearRequest({ policy: { maxRounds: 1 }, budget: { modelCalls: 5, costLimit: 500 } }));
    await dispatchRound(p.get(), tenantId, runId);
    const messages = await messagesOfRun(p.get(), 'tax-statements', runId);
    const bySubtask = (id: string) => messages.filter((m) => subtaskOf(m).subtaskId === id);

    expect(await deliver(p.get(), recordsOf(bySubtask('A')))).toEqual({ batchItemFailures: [] });
    expect(await deliver(p.get(), recordsOf(bySubtask('B')))).toEqual({ batchItemFailures: [] });

    const { outcomes, usage } = await stateOf(tenantId, runId);
    expect(outcomes.map((o) => [o.subtaskId, o.state, o.reason])).toEqual([
      ['A', 'ok', undefined],
      ['B', 'invalid', 'budget exhausted: run calls'],
    ]);
    expect(usage).toEqual({ modelCalls: 5, estimatedCost: 35 });
  });

  it('drops a message of a cancelled run without failing it, charging it or recording an outcome', async () => {
    const { tenantId, runId, messages } = await dispatchedRun();
    expect((await callApi(p.get(), { routeKey: 'POST /runs/{runId}/cancel', tenant: tenantId, runId })).statusCode).toBe(200);

    expect(await deliver(p.get(), recordsOf(messages))).toEqual({ batchItemFailures: [] });

    const { outcomes, usage, tenantCalls, b, late } = await stateOf(tenantId, runId);
    expect(outcomes.map((o) => [o.subtaskId, o.state, o.observed])).toEqual([['B', 'cancelled', null]]);
    // The cancel writes the run item only, so the claim (one UpdateItem of B) still goes through:
    // generation 1. Its first reservation checks the run and is refused, so nothing is charged,
    // and B reads as the cancel decided it until the run's closing sweeps it.
    expect(b).toMatchObject({ state: 'cancelled', generation: 1 });
    expect(b?.outcome).toBeUndefined();
    expect(usage).toEqual({ modelCalls: 0, estimatedCost: 0 });
    expect(tenantCalls).toBe(0);
    expect(late).toEqual([]);
  });

  it('remembers a cancelled run: after the first refused message, the next is acknowledged with no claim', async () => {
    p.get().clock.moveTo(0);
    const tenantId = uniqueName('tenant');
    const runId = await acceptRun(p.get(), tenantId, halfYearRequest());
    await dispatchRound(p.get(), tenantId, runId);
    const messages = await messagesOfRun(p.get(), 'tax-statements', runId);
    const [a, b] = ['A', 'B'].map((id) => messages.filter((m) => subtaskOf(m).subtaskId === id));
    expect([a?.length, b?.length]).toEqual([1, 1]);
    expect((await callApi(p.get(), { routeKey: 'POST /runs/{runId}/cancel', tenant: tenantId, runId })).statusCode).toBe(200);

    // The file's one worker handler is one worker instance: A's claim goes through (generation 1)
    // and its first reservation is refused; B's message then makes no ledger call, so B stays unclaimed.
    expect(await deliver(p.get(), recordsOf(a ?? []))).toEqual({ batchItemFailures: [] });
    expect(await deliver(p.get(), recordsOf(b ?? []))).toEqual({ batchItemFailures: [] });
    const subtasks = (await p.get().ledger.getRun(tenantId, runId))?.subtasks ?? [];
    expect(subtasks.map((s) => [s.subtaskId, s.generation])).toEqual([
      ['A', 1],
      ['B', 0],
    ]);
  });

  it('drops a message delivered after its deadline: the Map seals the subtask, and a retry could never claim it', async () => {
    const { tenantId, runId, messages } = await dispatchedRun();
    // Dispatched at T0 with 60 s; the message sat in the queue until T0 + 61 s.
    p.get().clock.moveTo(61_000);

    expect(await deliver(p.get(), recordsOf(messages))).toEqual({ batchItemFailures: [] });

    const { usage, b } = await stateOf(tenantId, runId);
    expect(b).toMatchObject({ state: 'pending', generation: 0 });
    expect(usage).toEqual({ modelCalls: 0, estimatedCost: 0 });
  });

  it('acknowledges a hedge replica that lost the race: refused at its first reservation, not failed, nothing more charged', async () => {
    p.get().clock.moveTo(0);
    const tenantId = uniqueName('tenant');
    const request = secondQuarterRequest();
    const [b] = request.subtasks ?? [];
    const runId = await acceptRun(p.get(), tenantId, { ...request, subtasks: [{ ...b!, hedge: { afterSeconds: 10, mode: 'replicate', copies: 2 } }] });
    await dispatchRound(p.get(), tenantId, runId);
    const [message] = await messagesOfRun(p.get(), 'tax-statements', runId);
    if (!message) throw new Error('B was enqueued');
    p.get().clock.moveTo(10_000);
    const { copies } = await p.get().ledger.startHedge({ tenantId, runId, subtaskId: 'B' });
    expect(copies.map((c) => c.id)).toEqual(['B.h1']);
    // the original wins first
    expect(await deliver(p.get(), recordsOf([message]))).toEqual({ batchItemFailures: [] });
    // the replica's message, as the hedge step enqueues it
    const replica = { ...message, MessageId: `${message.MessageId}-h1`, Body: JSON.stringify({ ...subtaskOf(message), subtaskId: 'B.h1' }) };
    expect(await deliver(p.get(), recordsOf([replica]))).toEqual({ batchItemFailures: [] });

    const { outcomes, usage } = await stateOf(tenantId, runId);
    expect(outcomes.map((o) => [o.subtaskId, o.state])).toEqual([['B', 'ok']]);
    expect(usage).toEqual({ modelCalls: 3, estimatedCost: 21 });
    const copy = await p.get().ledger.getSubtask({ tenantId, runId, subtaskId: 'B.h1' });
    // claimed once, no delivery failure recorded: a lost race is not a failed delivery
    expect([copy?.generation, copy?.lastDeliveryFailure]).toEqual([1, undefined]);
  });

  it('acknowledges a redelivered original that handed over to its pieces: not claimed, not failed, nothing charged', async () => {
    p.get().clock.moveTo(0);
    const tenantId = uniqueName('tenant');
    const request = secondQuarterRequest();
    const [b] = request.subtasks ?? [];
    const runId = await acceptRun(p.get(), tenantId, { ...request, subtasks: [{ ...b!, hedge: { afterSeconds: 10, mode: 'subdivide', copies: 2 } }] });
    await dispatchRound(p.get(), tenantId, runId);
    const [message] = await messagesOfRun(p.get(), 'tax-statements', runId);
    if (!message) throw new Error('B was enqueued');
    // A first delivery read April and checkpointed its findings, then went quiet.
    const claim = await p.get().ledger.claimSubtask({ tenantId, runId, subtaskId: 'B', workerId: 'w-first', leaseMs: 5_000 });
    const april = [{ from: '2025-04-01', toExclusive: '2025-05-01' }];
    const observed = { minDate: '2025-04-01', maxDate: '2025-04-30', recordCount: 6 };
    await p.get().ledger.writeCheckpoint(claim, {
      generation: 1,
      sequence: 1,
      writtenAt: '2025-06-01T00:00:05.000Z',
      covered: april,
      observed,
      partial: { covered: april, observed, findings: { currency: 'GBP', totalDeductiblePence: 10_500, transactions: 6, deductibleTransactions: 2 } },
    });
    p.get().clock.moveTo(10_000);
    const { copies } = await p.get().ledger.startHedge({ tenantId, runId, subtaskId: 'B' });
    // The rest, May and June (61 days), in two pieces of whole days.
    expect(copies.map((c) => [c.id, c.assigned])).toEqual([
      ['B.h1', { from: '2025-05-01', toExclusive: '2025-05-31' }],
      ['B.h2', { from: '2025-05-31', toExclusive: '2025-07-01' }],
    ]);
    // SQS delivers B's message again once its lease ran out: the handover stands.
    expect(await deliver(p.get(), recordsOf([message]))).toEqual({ batchItemFailures: [] });
    const item = await p.get().ledger.getSubtask({ tenantId, runId, subtaskId: 'B' });
    expect([item?.state, item?.generation, item?.lastDeliveryFailure, item?.checkpoint?.sequence]).toEqual(['running', 1, undefined, 1]);
    expect((await stateOf(tenantId, runId)).usage).toEqual({ modelCalls: 0, estimatedCost: 0 });
  });
});
