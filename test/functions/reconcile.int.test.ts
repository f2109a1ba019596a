import { describe, expect, it } from 'vitest';
import { RunResource, type RunRequestInput } from '../../lib/contract';
import { uniqueName } from '../support/aws';
import { acceptRun, callApi, deliver, deliverRun, dispatchRound, errorOf, halfYearRequest, messagesOfRun, pipeline, sqsRecord, subtaskOf } from './support';

/**
 * Reconcile, driven through the handlers: API → Dispatch → worker → Reconcile. The fixture's
 * statements: Q1 has 18 transactions from 2025-01-01 to 2025-03-31, 6 deductible, 28,249 pence;
 * Q2 has 18 from 2025-04-01 to 2025-06-27 (June's statement closes on the 27th), 6 deductible,
 * 23,499 pence; the transaction feed holds nothing from 2025-06-28 to 2025-06-30. One model call
 * per statement at 7 per call: a quarter costs 3 calls and 21; the feed makes no model calls.
 */
const p = pipeline('fn-reconcile');

/** A run accepted and its round 1 dispatched at T0. */
const dispatchedRun = async (request: RunRequestInput) => {
  p.get().clock.moveTo(0);
  const tenantId = uniqueName('tenant');
  const runId = await acceptRun(p.get(), tenantId, request);
  await dispatchRound(p.get(), tenantId, runId);
  return { tenantId, runId };
};

/** Round 1 worked: `only` limits which of A and B the worker is given. */
const roundOneWorked = async (request: RunRequestInput, only?: readonly string[]) => {
  const run = await dispatchedRun(request);
  expect(await deliverRun(p.get(), 'tax-statements', run.runId, only)).toEqual({ batchItemFailures: [] });
  return run;
};

/** A worked; B never ran and the Map sealed it at its deadline (T0 + 60 s). */
const bTimedOut = async (policy: RunRequestInput['policy']) => {
  const run = await roundOneWorked(halfYearRequest({ policy }), ['A']);
  p.get().clock.moveTo(60_000);
  expect(await p.get().deadline({ action: 'seal', ...run, subtaskId: 'B' })).toMatchObject({ sealed: true, state: 'timed_out' });
  return run;
};

const resourceOf = async (tenantId: string, runId: string) =>
  RunResource.parse((await callApi(p.get(), { routeKey: 'GET /runs/{runId}', tenant: tenantId, runId })).body);

const reconcileRound = (run: { tenantId: string; runId: string }, round: number) => p.get().reconcile({ mode: 'reconcile', ...run, round });

const B_TIMED_OUT_STATEMENT =
  'Coverage: 2025-01-01 to 2025-06-30, two partitions, no overlaps. One gap (2025-04-01 to 2025-06-30) not read: B timed out. Not covered: B (monthly statements, required) timed out. Question q2 unanswered.';

describe('reconcile with rounds left', () => {
  it("sends B's observed gap back out as round 2 and writes no answer yet", async () => {
    const run = await roundOneWorked(halfYearRequest());

    p.get().clock.moveTo(5_000);
    expect(await reconcileRound(run, 1)).toEqual({ next: 'dispatch', ...run, round: 2 });
    expect(await resourceOf(run.tenantId, run.runId)).toMatchObject({ status: 'running', answer: null });
    // The round Reconcile decided is the round stored, its deadline fixed when it was decided
    // (T0 + 5 s + B's 60 s); nothing is enqueued until Dispatch sends it.
    const { manifest } = await p.get().ledger.readManifest(run.tenantId, run.runId);
    expect(manifest.subtasks.filter((s) => s.round === 2).map((s) => [s.id, s.worker, s.assigned, s.deadline])).toEqual([
      ['B.g1', 'transaction-feed', { from: '2025-06-28', toExclusive: '2025-07-01' }, '2040-06-01T12:01:05.000Z'],
    ]);
    expect(await messagesOfRun(p.get(), 'transaction-feed', run.runId)).toEqual([]);
  });

  it('answers a retried Reconcile with the round it already stored, appending nothing again', async () => {
    const run = await roundOneWorked(halfYearRequest());
    await reconcileRound(run, 1);
    const stored = await p.get().ledger.getRun(run.tenantId, run.runId);

    p.get().clock.moveTo(20_000);
    expect(await reconcileRound(run, 1)).toEqual({ next: 'dispatch', ...run, round: 2 });
    expect(await p.get().ledger.getRun(run.tenantId, run.runId)).toEqual(stored);
  });
});

describe('reconcile when every round is done', () => {
  it('succeeds with the seed-000 statement once the feed confirms the gap empty, summing only the ok quarters', async () => {
    const run = await roundOneWorked(halfYearRequest());
    await reconcileRound(run, 1);
    const round2 = await dispatchRound(p.get(), run.tenantId, run.runId, 2);
    expect(round2.items.map((item) => item.subtaskId)).toEqual(['B.g1']);
    const feed = await messagesOfRun(p.get(), 'transaction-feed', run.runId);
    expect(feed.map(subtaskOf)).toEqual([{ v: 1, ...run, subtaskId: 'B.g1' }]);
    expect(
      await deliver(
        p.get(),
        feed.map((m) => sqsRecord(p.get(), 'transaction-feed', m)),
      ),
    ).toEqual({ batchItemFailures: [] });

    expect(await reconcileRound(run, 2)).toEqual({ next: 'finish', ...run, round: 2, status: 'succeeded' });

    const resource = await resourceOf(run.tenantId, run.runId);
    expect(resource.status).toBe('succeeded');
    expect(resource.subtasks.map((s) => [s.id, s.worker, s.state, s.assigned])).toEqual([
      ['A', 'tax-statements', 'ok', { from: '2025-01-01', toExclusive: '2025-04-01' }],
      ['B', 'tax-statements', 'ok', { from: '2025-04-01', toExclusive: '2025-07-01' }],
      ['B.g1', 'transaction-feed', 'empty', { from: '2025-06-28', toExclusive: '2025-07-01' }],
    ]);
    const statement =
      'Coverage: 2025-01-01 to 2025-06-30, two partitions, no overlaps. One gap (2025-06-28 to 2025-06-30) re-checked against the transaction feed: zero transactions.';
    expect(resource.answer?.coverage).toEqual({
      complete: true,
      missingQuestions: [],
      degradedReason: [],
      partitions: 2,
      overlaps: [],
      gaps: [
        {
          from: '2025-06-28',
          toExclusive: '2025-07-01',
          kind: 'observed',
          subtaskId: 'B',
          status: 'confirmed_empty',
          recheckedAgainst: 'transaction-feed',
          recheckSubtaskId: 'B.g1',
          records: 0,
        },
      ],
      problems: [expect.objectContaining({ code: 'observed_ends_early', subtaskIds: ['B'], from: '2025-06-28', toExclusive: '2025-07-01' })],
      statement,
    });
    // 28,249 + 23,499 pence over 18 + 18 transactions, 6 + 6 of them deductible.
    expect(resource.answer?.result).toEqual({
      currency: 'GBP',
      totalDeductiblePence: 51_748,
      totalDeductible: 517.48,
      transactions: 36,
      deductibleTransactions: 12,
    });
    expect(resource.answer?.text).toBe(`Deductible total: £517.48 from 36 transactions (12 deductible). ${statement}`);
    expect(resource.usage).toEqual({ modelCalls: 6, estimatedCost: 42 });
  });

  it('degrades with onRequiredGap degrade: succeeded, incomplete, and a total of A alone', async () => {
    const run = await bTimedOut({ maxRounds: 1, onRequiredGap: 'degrade' });

    expect(await reconcileRound(run, 1)).toEqual({ next: 'finish', ...run, round: 1, status: 'succeeded' });

    const resource = await resourceOf(run.tenantId, run.runId);
    expect(resource.status).toBe('succeeded');
    expect(resource.answer?.coverage).toMatchObject({
      complete: false,
      missingQuestions: ['q2'],
      degradedReason: ['B:timed_out'],
      statement: B_TIMED_OUT_STATEMENT,
    });
    expect(resource.answer?.result).toEqual({
      currency: 'GBP',
      totalDeductiblePence: 28_249,
      totalDeductible: 282.49,
      transactions: 18,
      deductibleTransactions: 6,
    });
  });

  it('fails a required subtask that timed out with onRequiredGap fail, keeping the coverage and giving no result', async () => {
    const run = await bTimedOut({ maxRounds: 1, onRequiredGap: 'fail' });

    expect(await reconcileRound(run, 1)).toEqual({ next: 'finish', ...run, round: 1, status: 'failed' });

    const resource = await resourceOf(run.tenantId, run.runId);
    expect(resource.status).toBe('failed');
    expect(resource.error).toEqual({ code: 'RequiredGapError', message: 'required coverage is missing: B:timed_out' });
    expect(resource.answer).toEqual({
      text: `The run failed: required coverage is missing. ${B_TIMED_OUT_STATEMENT}`,
      result: {},
      coverage: expect.objectContaining({
        complete: false,
        missingQuestions: ['q2'],
        degradedReason: ['B:timed_out'],
        partitions: 2,
        statement: B_TIMED_OUT_STATEMENT,
      }),
    });

    const cancel = await callApi(p.get(), { routeKey: 'POST /runs/{runId}/cancel', tenant: run.tenantId, runId: run.runId });
    expect(cancel.statusCode).toBe(409);
    expect(errorOf(cancel).code).toBe('RunAlreadyEnded');
  });

  it('keeps a cancelled run cancelled and still writes its answer with coverage', async () => {
    const run = await roundOneWorked(halfYearRequest(), ['A']);
    expect((await callApi(p.get(), { routeKey: 'POST /runs/{runId}/cancel', tenant: run.tenantId, runId: run.runId })).statusCode).toBe(200);

    expect(await reconcileRound(run, 1)).toEqual({ next: 'finish', ...run, round: 1, status: 'cancelled' });

    const resource = await resourceOf(run.tenantId, run.runId);
    expect(resource.status).toBe('cancelled');
    expect(resource.answer?.coverage).toMatchObject({
      complete: false,
      degradedReason: ['B:cancelled'],
      statement:
        'Coverage: 2025-01-01 to 2025-06-30, two partitions, no overlaps. One gap (2025-04-01 to 2025-06-30) not read: B was cancelled. Not covered: B (monthly statements, required) was cancelled. Question q2 unanswered.',
    });
  });
});

describe('reconcile in abort mode', () => {
  it('ends the run failed with the public code RunAborted (never the step’s own error name) and the coverage it has', async () => {
    const run = await roundOneWorked(halfYearRequest(), ['A']);

    // An adapter's class name, as Dispatch's Catch hands it to Finalize.
    const result = await p.get().reconcile({ mode: 'abort', ...run, error: { Error: 'InvalidLedgerInput', Cause: 'invalid input to appendRound' } });

    expect(result).toEqual({ next: 'finish', ...run, round: 1, status: 'failed' });
    const resource = await resourceOf(run.tenantId, run.runId);
    expect(resource.status).toBe('failed');
    expect(resource.error).toEqual({ code: 'RunAborted', message: 'a step of the run failed after its retries; see the execution history' });
    const statement =
      'Coverage: 2025-01-01 to 2025-06-30, two partitions, no overlaps. One gap (2025-04-01 to 2025-06-30) not read: B has no outcome. Not covered: B (monthly statements, required) has no outcome. Question q2 unanswered.';
    expect(resource.answer).toEqual({
      text: `The run failed: a step could not be completed. ${statement}`,
      result: {},
      coverage: expect.objectContaining({ complete: false, missingQuestions: ['q2'], degradedReason: ['B:missing_outcome'], statement }),
    });
    // Every dispatched subtask ends in exactly one terminal state: B, never run, is closed.
    expect(resource.subtasks.map((s) => [s.id, s.state])).toEqual([
      ['A', 'ok'],
      ['B', 'cancelled'],
    ]);
  });

  it('ends a run whose first Dispatch failed with coverage that names the whole universe as unassigned', async () => {
    p.get().clock.moveTo(0);
    const tenantId = uniqueName('tenant');
    const runId = await acceptRun(p.get(), tenantId, halfYearRequest());

    expect(await p.get().reconcile({ mode: 'abort', runId, tenantId })).toEqual({ next: 'finish', runId, tenantId, round: 0, status: 'failed' });

    const resource = await resourceOf(tenantId, runId);
    expect(resource).toMatchObject({ status: 'failed', error: { code: 'RunAborted' }, subtasks: [] });
    expect(resource.answer?.coverage).toMatchObject({
      complete: false,
      partitions: 0,
      degradedReason: ['universe:assignment_gap'],
      gaps: [{ kind: 'assignment', from: '2025-01-01', toExclusive: '2025-07-01', status: 'unchecked' }],
      // Both declared questions were only ever asked of subtasks that never ran.
      missingQuestions: ['q1', 'q2'],
      statement:
        'Coverage: 2025-01-01 to 2025-06-30, zero partitions, no overlaps. One gap (2025-01-01 to 2025-06-30) assigned to no subtask. ' +
        'Questions q1 and q2 unanswered.',
    });
  });
});

describe('closing the run of an execution that ended unfinished (the run-closure rule)', () => {
  /** The event as EventBridge delivers it for an execution of the run state machine. */
  const statusChange = (run: { tenantId: string; runId: string }, status: 'FAILED' | 'TIMED_OUT' | 'ABORTED', error: string | null = null) => ({
    version: '0',
    id: uniqueName('event'),
    'detail-type': 'Step Functions Execution Status Change',
    source: 'aws.states',
    account: '123456789012',
    time: '2040-06-01T12:05:00Z',
    region: 'eu-west-1',
    resources: [`arn:aws:states:eu-west-1:123456789012:execution:Runs:${run.runId}`],
    detail: {
      executionArn: `arn:aws:states:eu-west-1:123456789012:execution:Runs:${run.runId}`,
      stateMachineArn: 'arn:aws:states:eu-west-1:123456789012:stateMachine:Runs',
      name: run.runId,
      status,
      startDate: 2_222_222_222_000,
      stopDate: 2_222_222_522_000,
      input: JSON.stringify({ runId: run.runId, tenantId: run.tenantId, round: 1 }),
      inputDetails: { included: true },
      output: null,
      outputDetails: null,
      error,
      cause: error === null ? null : 'The run could not be recorded as failed; its ledger status may still read running.',
    },
  });
  const NO_OUTCOME_STATEMENT =
    'Coverage: 2025-01-01 to 2025-06-30, two partitions, no overlaps. One gap (2025-04-01 to 2025-06-30) not read: B has no outcome. Not covered: B (monthly statements, required) has no outcome. Question q2 unanswered.';

  it('closes a run left running when Finalize failed: failed, with its coverage and the reason', async () => {
    const run = await roundOneWorked(halfYearRequest(), ['A']);

    expect(await p.get().reconcile(statusChange(run, 'FAILED', 'FinalizeFailed'))).toEqual({ next: 'finish', ...run, round: 1, status: 'failed' });

    const resource = await resourceOf(run.tenantId, run.runId);
    expect(resource.status).toBe('failed');
    expect(resource.error).toEqual({
      code: 'ExecutionFailed',
      message: "the run's execution failed (FinalizeFailed) before the run was recorded; the run was closed when the execution ended",
    });
    expect(resource.answer).toEqual({
      text: `The run failed: its execution failed (FinalizeFailed). ${NO_OUTCOME_STATEMENT}`,
      result: {},
      coverage: expect.objectContaining({ complete: false, missingQuestions: ['q2'], degradedReason: ['B:missing_outcome'], statement: NO_OUTCOME_STATEMENT }),
    });
    expect(resource.subtasks.map((s) => [s.id, s.state])).toEqual([
      ['A', 'ok'],
      ['B', 'cancelled'],
    ]);
  });

  it.each([
    ['TIMED_OUT', 'ExecutionTimedOut', 'timed out'],
    ['ABORTED', 'ExecutionAborted', 'was aborted'],
  ] as const)('names a %s execution in the closed run (%s)', async (status, code, what) => {
    const run = await roundOneWorked(halfYearRequest(), ['A']);
    await p.get().reconcile(statusChange(run, status));
    const resource = await resourceOf(run.tenantId, run.runId);
    expect(resource).toMatchObject({ status: 'failed', error: { code } });
    expect(resource.answer?.text).toBe(`The run failed: its execution ${what}. ${NO_OUTCOME_STATEMENT}`);
  });

  it("leaves a run that already ended failed exactly as it is: the state machine's own RunFailed ends its execution FAILED too", async () => {
    const run = await bTimedOut({ maxRounds: 1, onRequiredGap: 'fail' });
    await reconcileRound(run, 1);
    const ended = await resourceOf(run.tenantId, run.runId);
    expect(ended).toMatchObject({ status: 'failed', error: { code: 'RequiredGapError' } });

    expect(await p.get().reconcile(statusChange(run, 'FAILED', 'RunFailed'))).toEqual({ next: 'finish', ...run, round: 1, status: 'failed' });
    expect(await resourceOf(run.tenantId, run.runId)).toEqual(ended);
  });

  it('leaves a succeeded run succeeded when its execution is stopped after Reconcile recorded it', async () => {
    const run = await bTimedOut({ maxRounds: 1, onRequiredGap: 'degrade' });
    await reconcileRound(run, 1);
    const ended = await resourceOf(run.tenantId, run.runId);
    expect(ended.status).toBe('succeeded');

    expect(await p.get().reconcile(statusChange(run, 'ABORTED'))).toEqual({ next: 'finish', ...run, round: 1, status: 'succeeded' });
    expect(await resourceOf(run.tenantId, run.runId)).toEqual(ended);
  });

  it('closes a cancelled run when the cancel stops its execution: cancelled, no error, its open subtasks swept', async () => {
    const run = await roundOneWorked(halfYearRequest(), ['A']);
    expect((await callApi(p.get(), { routeKey: 'POST /runs/{runId}/cancel', tenant: run.tenantId, runId: run.runId })).statusCode).toBe(200);

    expect(await p.get().reconcile(statusChange(run, 'ABORTED'))).toEqual({ next: 'finish', ...run, round: 1, status: 'cancelled' });

    const resource = await resourceOf(run.tenantId, run.runId);
    expect(resource.status).toBe('cancelled');
    expect(resource.error).toBeUndefined();
    const statement =
      'Coverage: 2025-01-01 to 2025-06-30, two partitions, no overlaps. One gap (2025-04-01 to 2025-06-30) not read: B was cancelled. Not covered: B (monthly statements, required) was cancelled. Question q2 unanswered.';
    expect(resource.answer?.coverage).toMatchObject({ complete: false, degradedReason: ['B:cancelled'], statement });
    expect(resource.answer?.text).toContain(statement);
    // The closing swept B in the ledger itself, after the answer was stored.
    expect((await p.get().ledger.getSubtask({ ...run, subtaskId: 'B' }))?.state).toBe('cancelled');
  });

  it('closes a run once: a second event for the same execution changes nothing', async () => {
    const run = await roundOneWorked(halfYearRequest(), ['A']);
    await p.get().reconcile(statusChange(run, 'ABORTED'));
    const closed = await resourceOf(run.tenantId, run.runId);
    await p.get().reconcile(statusChange(run, 'ABORTED'));
    expect(await resourceOf(run.tenantId, run.runId)).toEqual(closed);
  });

  it('refuses an event whose execution input does not name a run, saying which field', async () => {
    const run = { tenantId: uniqueName('tenant'), runId: uniqueName('run') };
    const event = statusChange(run, 'ABORTED');
    await expect(p.get().reconcile({ ...event, detail: { ...event.detail, input: null } })).rejects.toMatchObject({
      name: 'InvalidTaskInput',
      message: expect.stringContaining('input'),
    });
    await expect(p.get().reconcile({ ...event, detail: { ...event.detail, input: '{"round":1}' } })).rejects.toMatchObject({
      name: 'InvalidTaskInput',
      message: expect.stringContaining('input.runId'),
    });
  });
});
