import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { DispatchedSubtask } from '../../lib/contract';
import { ImmutableAssignment, InvalidLedgerInput, RunCancelled, toRunResource, type Ledger } from '../../lib/ledger';
import { metaKey } from '../../lib/ledger/keys';
import { documentClient, dynamoClient, uniqueName } from '../support/aws';
import { dispatched, ledgerFor, ledgerTestTable, taxYearRequest } from './support';

const suite = ledgerTestTable('ledger-manifest');
const { clock } = suite;

/** 250 one-day subtasks S001…S250 from 2025-01-01, the size that needs three transactions (99 + 99 + 52). */
const days250 = (): DispatchedSubtask[] =>
  Array.from({ length: 250 }, (_, index) => {
    const from = new Date(Date.UTC(2025, 0, 1 + index)).toISOString().slice(0, 10);
    const to = new Date(Date.UTC(2025, 0, 2 + index)).toISOString().slice(0, 10);
    return dispatched(`S${String(index + 1).padStart(3, '0')}`, from, to);
  });

/** A ledger whose client fails the n-th TransactWriteItems, as if the dispatch Lambda died there. */
const crashingAtTransaction = (n: number): Ledger => {
  const base = dynamoClient();
  let transactions = 0;
  base.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'TransactWriteItemsCommand' && ++transactions === n) throw new Error(`injected crash at transaction ${n}`);
      return next(args);
    },
    { step: 'initialize', name: 'injectCrash' },
  );
  return ledgerFor({ tableName: suite.tableName, clock, client: documentClient(base) });
};

const newRun = async (): Promise<{ tenantId: string; runId: string }> => {
  const tenantId = uniqueName('tenant');
  const runId = uniqueName('run');
  await suite.ledger.createRun({ tenantId, runId, request: taxYearRequest() });
  return { tenantId, runId };
};

describe('a 250-subtask round', () => {
  it('is not readable as complete when the dispatch dies after the first chunk, and a retry completes it', async () => {
    const { tenantId, runId } = await newRun();
    const subtasks = days250();
    await expect(crashingAtTransaction(2).appendRound({ tenantId, runId, round: 1, subtasks })).rejects.toThrow('injected crash at transaction 2');

    const halfWritten = await suite.ledger.readManifest(tenantId, runId);
    expect(halfWritten.run.round).toBe(0);
    expect(halfWritten.manifest.subtasks).toEqual([]);
    expect(halfWritten.uncommitted).toHaveLength(99);
    expect(halfWritten.uncommitted[0]).toBe('S001');
    expect(toRunResource((await suite.ledger.getRun(tenantId, runId))!).progress.dispatched).toBe(0);

    const retried = await suite.ledger.appendRound({ tenantId, runId, round: 1, subtasks });
    expect(retried).toMatchObject({ round: 1, written: 151, alreadyPresent: 99 });
    const complete = await suite.ledger.readManifest(tenantId, runId);
    expect(complete.run).toMatchObject({ round: 1, roundSizes: [250] });
    expect(complete.manifest.subtasks).toHaveLength(250);
    expect(complete.manifest.subtasks.map((s) => s.id).slice(98, 101)).toEqual(['S099', 'S100', 'S101']);
    expect(complete.manifest.subtasks[249]).toMatchObject({ id: 'S250', assigned: { from: '2025-09-07', toExclusive: '2025-09-08' } });
    expect(complete.uncommitted).toEqual([]);
  });

  it('never shows a partial round to readers interleaved with the chunked writes', async () => {
    const { tenantId, runId } = await newRun();
    let done = false;
    const writing = suite.ledger.appendRound({ tenantId, runId, round: 1, subtasks: days250() }).finally(() => {
      done = true;
    });
    const seen: { committed: number; uncommitted: number }[] = [];
    while (!done) {
      const read = await suite.ledger.readManifest(tenantId, runId);
      seen.push({ committed: read.manifest.subtasks.length, uncommitted: read.uncommitted.length });
    }
    await writing;
    // The reads did overlap the chunked writes: some saw chunks on disk but no commit marker.
    expect(seen.some((read) => read.committed === 0 && read.uncommitted > 0)).toBe(true);
    expect(seen.every((read) => read.committed === 0 || (read.committed === 250 && read.uncommitted === 0))).toBe(true);
    expect((await suite.ledger.readManifest(tenantId, runId)).manifest.subtasks).toHaveLength(250);
  });

  it('answers a retry after the commit with the stored round and writes nothing', async () => {
    const { tenantId, runId } = await newRun();
    await suite.ledger.appendRound({ tenantId, runId, round: 1, subtasks: days250() });
    await expect(suite.ledger.appendRound({ tenantId, runId, round: 1, subtasks: days250() })).resolves.toMatchObject({ written: 0, alreadyPresent: 250 });
  });
});

describe('immutable assignments', () => {
  it('refuses a retried dispatch that changes one assignment, before or after the commit', async () => {
    const { tenantId, runId } = await newRun();
    const subtasks = days250();
    await expect(crashingAtTransaction(2).appendRound({ tenantId, runId, round: 1, subtasks })).rejects.toThrow('injected crash');
    const widened = subtasks.map((s) => (s.id === 'S007' ? { ...s, assigned: { from: '2025-01-07', toExclusive: '2025-01-09' } } : s));
    await expect(suite.ledger.appendRound({ tenantId, runId, round: 1, subtasks: widened })).rejects.toMatchObject({
      name: 'ImmutableAssignment',
      subtaskId: 'S007',
    });

    await suite.ledger.appendRound({ tenantId, runId, round: 1, subtasks });
    const later = subtasks.map((s) => (s.id === 'S200' ? { ...s, deadline: '2040-06-01T13:00:00.000Z' } : s));
    await expect(suite.ledger.appendRound({ tenantId, runId, round: 1, subtasks: later })).rejects.toBeInstanceOf(ImmutableAssignment);
  });

  it('refuses a later round that reuses a subtask id with another assignment', async () => {
    const { tenantId, runId } = await newRun();
    await suite.ledger.appendRound({ tenantId, runId, round: 1, subtasks: [dispatched('A', '2025-01-01', '2025-04-01')] });
    const reuse = dispatched('A', '2025-03-28', '2025-04-01', { round: 2 });
    await expect(suite.ledger.appendRound({ tenantId, runId, round: 2, subtasks: [reuse] })).rejects.toMatchObject({
      name: 'ImmutableAssignment',
      subtaskId: 'A',
    });
    const recheck = dispatched('A.2', '2025-03-28', '2025-04-01', { round: 2, worker: 'transaction-feed' });
    await expect(suite.ledger.appendRound({ tenantId, runId, round: 2, subtasks: [recheck] })).resolves.toMatchObject({ round: 2, written: 1 });
    const { manifest, run } = await suite.ledger.readManifest(tenantId, runId);
    expect(manifest.subtasks.map((s) => [s.id, s.round])).toEqual([
      ['A', 1],
      ['A.2', 2],
    ]);
    expect(run.roundSizes).toEqual([1, 1]);
  });

  it('detects a stored assignment edited behind the ledger’s back', async () => {
    const { tenantId, runId } = await newRun();
    await suite.ledger.appendRound({ tenantId, runId, round: 1, subtasks: [dispatched('A', '2025-01-01', '2025-04-01')] });
    const record = await suite.ledger.getRun(tenantId, runId);
    await documentClient().send(
      new UpdateCommand({
        TableName: suite.tableName,
        Key: { pk: record!.subtasks[0]!.pk, sk: record!.subtasks[0]!.sk },
        UpdateExpression: 'SET assignment.assigned.toExclusive = :later',
        ExpressionAttributeValues: { ':later': '2025-05-01' },
      }),
    );
    await expect(suite.ledger.readManifest(tenantId, runId)).rejects.toMatchObject({ name: 'ImmutableAssignment', subtaskId: 'A' });
  });
});

describe('round bookkeeping', () => {
  it('fixes deadlines from a stable dispatch instant, so a retried dispatch computes the same ones', async () => {
    const { tenantId, runId } = await newRun();
    const relative = { ...dispatched('A', '2025-01-01', '2025-04-01'), deadline: undefined, deadlineSeconds: 90 };
    const first = await suite.ledger.appendRound({ tenantId, runId, round: 1, subtasks: [relative], dispatchedAt: '2040-06-01T12:00:00Z' });
    expect(first.subtasks[0]?.deadline).toBe('2040-06-01T12:01:30.000Z');
    clock.advance(5_000);
    await expect(suite.ledger.appendRound({ tenantId, runId, round: 1, subtasks: [relative], dispatchedAt: '2040-06-01T12:00:00Z' })).resolves.toMatchObject({
      written: 0,
      alreadyPresent: 1,
    });
  });

  it('refuses rounds out of order, subtasks without a deadline, and rounds of a cancelled run', async () => {
    const { tenantId, runId } = await newRun();
    const noDeadline = { ...dispatched('A', '2025-01-01', '2025-04-01'), deadline: undefined };
    await expect(suite.ledger.appendRound({ tenantId, runId, round: 1, subtasks: [noDeadline] })).rejects.toMatchObject({
      name: 'InvalidLedgerInput',
      issues: ['subtask A: give an absolute deadline or deadlineSeconds'],
    });
    await expect(
      suite.ledger.appendRound({ tenantId, runId, round: 2, subtasks: [dispatched('A', '2025-01-01', '2025-04-01', { round: 2 })] }),
    ).rejects.toBeInstanceOf(InvalidLedgerInput);
    await suite.ledger.cancelRun(tenantId, runId);
    await expect(suite.ledger.appendRound({ tenantId, runId, round: 1, subtasks: [dispatched('A', '2025-01-01', '2025-04-01')] })).rejects.toBeInstanceOf(
      RunCancelled,
    );
    expect((await suite.ledger.getRun(tenantId, runId))?.uncommitted).toEqual([]);
  });
});

describe('what a round was decided with', () => {
  it('keeps the plan a run was created with, in parts once it is large, for Dispatch to append as it is', async () => {
    const tenantId = uniqueName('tenant');
    const runId = uniqueName('run');
    const plan = days250().map(({ deadline: _absolute, ...s }) => ({ ...s, deadlineSeconds: 60 }));
    await suite.ledger.createRun({ tenantId, runId, request: taxYearRequest(), plan });

    const record = await suite.ledger.getRun(tenantId, runId);
    expect(record?.meta.plan).toEqual(plan);
    expect(record?.meta.universe).toEqual(taxYearRequest().universe);
    // 250 assignments are more than 16 KB of JSON: the meta item refers to parts instead.
    const { Item } = await documentClient().send(new GetCommand({ TableName: suite.tableName, Key: metaKey(tenantId, runId) }));
    expect(Item?.plan).toBeUndefined();
    expect(Item?.planParts).toMatchObject({ prefix: 'PART#META#plan#', count: 1 });
  });
});
