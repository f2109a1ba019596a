import { describe, expect, it } from 'vitest';
import type { Answer } from '../../lib/contract';
import { hashRequest, IdempotencyConflict, RunEnded, toRunResource } from '../../lib/ledger';
import { uniqueName } from '../support/aws';
import { dispatched, ledgerFor, ledgerTestTable, okOutcome, startRun, taxYearRequest, testClock } from './support';

const suite = ledgerTestTable('ledger-runs');
const { clock } = suite;

const answer = (statement: string): Answer => ({
  text: 'Deductible total: 3880.',
  result: { totalDeductible: 3880 },
  coverage: { complete: false, missingQuestions: [], degradedReason: ['B:timed_out'], partitions: 3, overlaps: [], gaps: [], problems: [], statement },
});

describe('createRun', () => {
  it('returns the first run for a retried key and refuses a changed body under the same key', async () => {
    const tenantId = uniqueName('tenant');
    const first = await suite.ledger.createRun({ tenantId, runId: 'run-1', idempotencyKey: 'order-7', request: taxYearRequest() });
    const retry = await suite.ledger.createRun({ tenantId, runId: 'run-2', idempotencyKey: 'order-7', request: taxYearRequest() });
    expect(first.created).toBe(true);
    expect(retry).toMatchObject({ created: false, run: { runId: 'run-1', status: 'running' } });

    const changed = suite.ledger.createRun({
      tenantId,
      runId: 'run-3',
      idempotencyKey: 'order-7',
      request: taxYearRequest({ goal: 'Total deductible expenses for 2024' }),
    });
    await expect(changed).rejects.toBeInstanceOf(IdempotencyConflict);
    await expect(changed).rejects.toMatchObject({ idempotencyKey: 'order-7', existingRunId: 'run-1' });
    expect(await suite.ledger.getRun(tenantId, 'run-2')).toBeUndefined();
    expect(await suite.ledger.getRun(tenantId, 'run-3')).toBeUndefined();
  });

  it('scopes idempotency keys and run ids to the tenant', async () => {
    const [tenantA, tenantB] = [uniqueName('tenant'), uniqueName('tenant')];
    await suite.ledger.createRun({ tenantId: tenantA, runId: 'shared-id', idempotencyKey: 'k', request: taxYearRequest() });
    const other = await suite.ledger.createRun({
      tenantId: tenantB,
      runId: 'shared-id',
      idempotencyKey: 'k',
      request: taxYearRequest({ goal: 'Another goal' }),
    });
    expect(other.created).toBe(true);
    expect((await suite.ledger.getRun(tenantA, 'shared-id'))?.meta.goal).toBe('Total deductible household expenses for tax year 2025');
    expect((await suite.ledger.getRun(tenantB, 'shared-id'))?.meta.goal).toBe('Another goal');
    expect(await suite.ledger.getRun(uniqueName('tenant'), 'shared-id')).toBeUndefined();
  });

  it('treats a retried run id without a key like a key: same body returns it, another body conflicts', async () => {
    const tenantId = uniqueName('tenant');
    await suite.ledger.createRun({ tenantId, runId: 'run-x', request: taxYearRequest() });
    await expect(suite.ledger.createRun({ tenantId, runId: 'run-x', request: taxYearRequest() })).resolves.toMatchObject({ created: false });
    await expect(
      suite.ledger.createRun({ tenantId, runId: 'run-x', request: taxYearRequest({ budget: { modelCalls: 41, costLimit: 500 } }) }),
    ).rejects.toMatchObject({
      name: 'IdempotencyConflict',
      idempotencyKey: undefined,
      existingRunId: 'run-x',
    });
  });

  it('forgets a key after 24 hours even before DynamoDB deletes the expired record', async () => {
    const tenantId = uniqueName('tenant');
    const today = ledgerFor({ tableName: suite.tableName, clock: testClock('2040-06-01T12:00:00.000Z') });
    const justUnderADayLater = ledgerFor({ tableName: suite.tableName, clock: testClock('2040-06-02T11:59:59.000Z') });
    const aDayAndASecondLater = ledgerFor({ tableName: suite.tableName, clock: testClock('2040-06-02T12:00:01.000Z') });
    await today.createRun({ tenantId, runId: 'day-1', idempotencyKey: 'nightly', request: taxYearRequest() });
    const other = taxYearRequest({ goal: 'Next night' });
    await expect(justUnderADayLater.createRun({ tenantId, runId: 'day-2', idempotencyKey: 'nightly', request: other })).rejects.toBeInstanceOf(
      IdempotencyConflict,
    );
    const next = await aDayAndASecondLater.createRun({ tenantId, runId: 'day-2', idempotencyKey: 'nightly', request: other });
    expect(next).toMatchObject({ created: true, run: { runId: 'day-2' } });
  });

  it('hashes the request after defaults, so key order and spelled-out defaults are the same request', () => {
    const written = taxYearRequest();
    const reordered = {
      budget: { costLimit: 500, modelCalls: 40 },
      policy: { maxRounds: 2, onOptionalGap: 'degrade' as const, onRequiredGap: 'fail' as const, retry: { empty: 0, invalid: 1, timed_out: 1 } },
      subtasks: written.subtasks,
      universe: { toExclusive: '2026-01-01', from: '2025-01-01', dimension: 'time' as const },
      goal: written.goal,
    };
    expect(hashRequest(reordered)).toBe(hashRequest(written));
    expect(hashRequest(taxYearRequest({ goal: 'Other' }))).not.toBe(hashRequest(written));
  });
});

describe('getRun and finishRun', () => {
  it('maps a run with an ok, a timed-out and a pending subtask to the run resource', async () => {
    clock.set('2040-06-01T12:00:00.000Z');
    const tenantId = uniqueName('tenant');
    const runId = await startRun(suite.ledger, tenantId, [
      dispatched('A', '2025-01-01', '2025-04-01'),
      dispatched('B', '2025-04-01', '2025-07-01'),
      dispatched('C', '2025-07-01', '2025-10-01', { deadline: '2040-06-01T12:10:00.000Z' }),
    ]);
    const claimA = await suite.ledger.claimSubtask({ tenantId, runId, subtaskId: 'A', workerId: 'w-a', leaseMs: 30_000 });
    await suite.ledger.reserveBudget(claimA);
    await suite.ledger.reserveBudget(claimA);
    await suite.ledger.recordOutcome(claimA, okOutcome('A', '2025-01-02', '2025-03-31', 180));
    await suite.ledger.claimSubtask({ tenantId, runId, subtaskId: 'B', workerId: 'w-b', leaseMs: 30_000 });
    clock.set('2040-06-01T12:01:00.000Z');
    await suite.ledger.sealTimedOut({ tenantId, runId, subtaskId: 'B' });

    const record = await suite.ledger.getRun(tenantId, runId);
    const resource = toRunResource(record!);
    expect(resource).toMatchObject({
      runId,
      status: 'running',
      goal: 'Total deductible household expenses for tax year 2025',
      round: 1,
      budget: { modelCalls: 40, costLimit: 500 },
      usage: { modelCalls: 2, estimatedCost: 14 },
      progress: { dispatched: 3, terminal: 2, byState: { pending: 1, running: 0, ok: 1, timed_out: 1, invalid: 0, empty: 0, cancelled: 0 } },
      answer: null,
    });
    expect(resource.subtasks.map((s) => [s.id, s.state])).toEqual([
      ['A', 'ok'],
      ['B', 'timed_out'],
      ['C', 'pending'],
    ]);
    expect(resource.subtasks[0]).toMatchObject({
      assigned: { from: '2025-01-01', toExclusive: '2025-04-01' },
      observed: { minDate: '2025-01-02', maxDate: '2025-03-31', recordCount: 180 },
      sources: ['stmt-2025-01'],
      sourcesReached: 1,
      usage: { modelCalls: 2, estimatedCost: 14 },
    });
    expect(resource.subtasks[1]).toMatchObject({
      usage: { modelCalls: 0, estimatedCost: 0 },
      reason: 'deadline 2040-06-01T12:01:00.000Z passed; claimed by generation 1 (worker w-b) but no result arrived',
    });
    expect(resource.subtasks[2]?.reason).toBeUndefined();

    const manifest = await suite.ledger.readManifest(tenantId, runId);
    expect(manifest.manifest.subtasks.map((s) => s.id)).toEqual(['A', 'B', 'C']);
    expect(manifest.outcomes.map((o) => [o.subtaskId, o.state])).toEqual([
      ['A', 'ok'],
      ['B', 'timed_out'],
    ]);
    expect(manifest.outcomes[0]?.findings).toEqual({ totalDeductible: 3880 });
    expect(manifest.unfinished).toEqual(['C']);
  });

  it('ends a failed run with its answer, closes what is unfinished, and refuses a different ending', async () => {
    clock.set('2040-06-01T12:00:00.000Z');
    const tenantId = uniqueName('tenant');
    const runId = await startRun(suite.ledger, tenantId, [dispatched('A', '2025-01-01', '2025-04-01'), dispatched('B', '2025-04-01', '2025-07-01')]);
    const claimA = await suite.ledger.claimSubtask({ tenantId, runId, subtaskId: 'A', workerId: 'w-a', leaseMs: 30_000 });
    await suite.ledger.recordOutcome(claimA, okOutcome('A', '2025-01-02', '2025-03-31', 180));
    clock.set('2040-06-01T12:00:20.000Z');

    const ended = await suite.ledger.finishRun({
      tenantId,
      runId,
      status: 'failed',
      answer: answer('Coverage: one of two partitions.'),
      error: { code: 'aborted', message: 'dispatch failed' },
    });
    expect(ended).toEqual({ status: 'failed', cancelledSubtaskIds: ['B'], taskTokens: [] });
    const resource = toRunResource((await suite.ledger.getRun(tenantId, runId))!);
    expect(resource.status).toBe('failed');
    expect(resource.answer?.coverage.statement).toBe('Coverage: one of two partitions.');
    expect(resource.error).toEqual({ code: 'aborted', message: 'dispatch failed' });
    expect(resource.subtasks.map((s) => [s.id, s.state, s.reason])).toEqual([
      ['A', 'ok', undefined],
      ['B', 'cancelled', 'run ended failed at 2040-06-01T12:00:20.000Z; never claimed'],
    ]);

    await expect(suite.ledger.finishRun({ tenantId, runId, status: 'failed', answer: answer('again') })).resolves.toMatchObject({
      status: 'failed',
      cancelledSubtaskIds: [],
    });
    await expect(suite.ledger.finishRun({ tenantId, runId, status: 'succeeded', answer: answer('no') })).rejects.toBeInstanceOf(RunEnded);
  });
});
