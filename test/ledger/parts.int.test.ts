import { createHash } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { Answer, DispatchedSubtask, RunRequestInput } from '../../lib/contract';
import { IdempotencyConflict, RequestTooLarge, toRunResource, type Ledger } from '../../lib/ledger';
import { documentClient, dynamoClient, uniqueName } from '../support/aws';
import { shardPartitions } from '../../lib/ledger/keys';
import { ledgerFor, ledgerTestTable, settle, TEST_SHARDS } from './support';

const suite = ledgerTestTable('ledger-parts');
const { clock } = suite;

/**
 * `count` account ids that compress like real ones (hex digests, not a counter), so the parts
 * are large enough to need several of them and the run partition takes several Query pages.
 */
const accountIds = (count: number, salt = ''): string[] =>
  Array.from({ length: count }, (_, i) => `acct-${createHash('sha1').update(`${salt}${i}`).digest('hex').slice(0, 10)}`);

const idsRequest = (ids: readonly string[], goal = 'Which accounts have a dormant card?'): RunRequestInput => ({
  goal,
  universe: { dimension: 'ids', ids: [...ids], noun: 'account' },
  split: {
    worker: 'chaos',
    parts: 2,
    required: true,
    justification: 'every account must be checked',
    deadlineSeconds: 60,
    budget: { modelCalls: 2, estimatedCostPerCall: 1 },
  },
  budget: { modelCalls: 10, costLimit: 100 },
});

const half = (ids: readonly string[], id: 'A' | 'B'): DispatchedSubtask => ({
  id,
  worker: 'chaos',
  round: 1,
  questionIds: [],
  required: true,
  assigned: { ids: id === 'A' ? ids.slice(0, ids.length / 2) : ids.slice(ids.length / 2) },
  deadline: '2040-06-01T12:01:00.000Z',
  budget: { modelCalls: 2, estimatedCostPerCall: 1 },
});

/** Every item of a run's partition (and of its shards when the suite shards runs), read page by page, with how many pages it took. */
const partition = async (tenantId: string, runId: string): Promise<{ items: Record<string, unknown>[]; pages: number }> => {
  const client = documentClient();
  const items: Record<string, unknown>[] = [];
  let pages = 0;
  const partitions = [
    `T#${encodeURIComponent(tenantId)}#R#${encodeURIComponent(runId)}`,
    ...(TEST_SHARDS > 1 ? shardPartitions(tenantId, runId, TEST_SHARDS) : []),
  ];
  for (const pk of partitions) {
    let start: Record<string, unknown> | undefined;
    do {
      const page = await client.send(
        new QueryCommand({
          TableName: suite.tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': pk },
          ExclusiveStartKey: start,
        }),
      );
      items.push(...(page.Items ?? []));
      pages += 1;
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
  }
  return { items, pages };
};

/** A ledger whose client fails the n-th call of one command, as if the Lambda died there. */
const crashingAt = (command: 'TransactWriteItemsCommand' | 'UpdateItemCommand', n: number): Ledger => {
  const base = dynamoClient();
  let calls = 0;
  base.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === command && ++calls === n) throw new Error(`injected crash at ${command} ${n}`);
      return next(args);
    },
    { step: 'initialize', name: 'injectCrash' },
  );
  return ledgerFor({ tableName: suite.tableName, clock, client: documentClient(base) });
};

const DYNAMODB_ITEM_LIMIT = 400 * 1024;

describe('a 100,000-id universe in two parts', () => {
  it('stores the request, both 50,000-id assignments, an outcome and an answer in parts, and reads them back whole', async () => {
    const tenantId = uniqueName('tenant');
    const runId = uniqueName('run');
    const ids = accountIds(100_000);
    const request = idsRequest(ids);
    await suite.ledger.createRun({ tenantId, runId, idempotencyKey: 'accounts-1', request });
    await suite.ledger.appendRound({ tenantId, runId, round: 1, subtasks: [half(ids, 'A'), half(ids, 'B')] });

    // The holder of A gets its whole assignment back, although the item only refers to it.
    const claim = await suite.ledger.claimSubtask({ tenantId, runId, subtaskId: 'A', workerId: 'w-1', leaseMs: 30_000 });
    expect(claim.subtask.assigned).toEqual({ ids: ids.slice(0, 50_000) });
    // A observed all of its ids but the first ten.
    const observed = ids.slice(10, 50_000).sort();
    await suite.ledger.recordOutcome(claim, {
      subtaskId: 'A',
      state: 'ok',
      observed: { ids: observed, recordCount: observed.length },
      sources: ['chaos'],
      sourcesReached: 1,
    });
    const missing = ids.slice(0, 10);
    const answer: Answer = {
      text: 'Two of the accounts…',
      result: { touched: observed.length },
      coverage: {
        complete: false,
        missingQuestions: [],
        degradedReason: ['B:cancelled'],
        partitions: 2,
        overlaps: [],
        // Large enough to need parts: the ids no subtask observed, twice (gap and problem).
        gaps: [
          { kind: 'assignment', ids: ids.slice(50_000), status: 'unchecked' },
          { kind: 'observed', subtaskId: 'A', ids: missing, status: 'unchecked' },
        ],
        problems: [],
        statement: 'Coverage: 49,990 of 100,000 accounts.',
      },
    };
    await suite.ledger.finishRun({ tenantId, runId, status: 'failed', answer });

    const record = (await suite.ledger.getRun(tenantId, runId))!;
    expect(record.meta.universe).toEqual(request.universe);
    expect(record.meta.request.universe).toEqual(request.universe);
    expect(record.subtasks.map((s) => s.assignment.assigned)).toEqual([{ ids: ids.slice(0, 50_000) }, { ids: ids.slice(50_000) }]);
    expect(record.subtasks[0]!.outcome?.observed).toEqual({ ids: observed, recordCount: 49_990 });
    expect(record.run.answer).toEqual(answer);
    const resource = toRunResource(record);
    expect(resource.subtasks.map((s) => s.state)).toEqual(['ok', 'cancelled']);

    const read = await suite.ledger.readManifest(tenantId, runId);
    expect(read.manifest.universe).toEqual(request.universe);
    expect(read.outcomes[0]?.observed).toEqual({ ids: observed, recordCount: 49_990 });

    // As stored: no item near DynamoDB's limit, the universe not stored twice, the partition read in pages.
    const stored = await partition(tenantId, runId);
    // An upper bound of each item's size: its JSON, binary parts counted by their length.
    const sizes = stored.items.map((item) =>
      Buffer.byteLength(JSON.stringify(item, (_key, value: unknown) => (value instanceof Uint8Array ? 'x'.repeat(value.byteLength) : value))),
    );
    expect(Math.max(...sizes)).toBeLessThan(DYNAMODB_ITEM_LIMIT);
    const meta = stored.items.find((item) => item.sk === 'META')!;
    expect(meta.universe).toBeUndefined();
    expect(meta.requestParts).toMatchObject({ prefix: 'PART#META#request#' });
    const keys = stored.items.map((item) => String(item.sk));
    expect(keys.filter((sk) => sk.startsWith('PART#META#request#')).length).toBeGreaterThanOrEqual(2);
    expect(keys.filter((sk) => sk.startsWith('PART#SUB#A#assignment#')).length).toBeGreaterThanOrEqual(1);
    expect(keys.filter((sk) => sk.startsWith('PART#SUB#A#outcome#000001#')).length).toBeGreaterThanOrEqual(1);
    expect(keys.filter((sk) => sk.startsWith('PART#RUN#answer#')).length).toBeGreaterThanOrEqual(1);
    expect(stored.pages).toBeGreaterThan(1);
  });

  it('keeps one run when the same large request is created concurrently under one Idempotency-Key, leaving nothing of the others', async () => {
    const tenantId = uniqueName('tenant');
    const request = idsRequest(accountIds(100_000, 'dup'));
    const runIds = Array.from({ length: 6 }, () => uniqueName('run'));
    const { values, errors } = await settle(runIds.map((runId) => suite.ledger.createRun({ tenantId, runId, idempotencyKey: 'nightly', request })));
    expect(errors).toEqual([]);
    expect(values.filter((v) => v.created)).toHaveLength(1);
    const winner = values.find((v) => v.created)!.run.runId;
    expect(new Set(values.map((v) => v.run.runId))).toEqual(new Set([winner]));
    for (const runId of runIds.filter((id) => id !== winner)) {
      expect(await suite.ledger.getRun(tenantId, runId)).toBeUndefined();
      expect((await partition(tenantId, runId)).items).toEqual([]);
    }
    expect((await suite.ledger.getRun(tenantId, winner))?.meta.universe).toEqual(request.universe);
  });

  it('leaves no partial run when the creating transaction fails, and a conflicting create does not touch the stored parts', async () => {
    const tenantId = uniqueName('tenant');
    const request = idsRequest(accountIds(100_000, 'crash'));
    await expect(crashingAt('TransactWriteItemsCommand', 1).createRun({ tenantId, runId: 'crashed', idempotencyKey: 'k-1', request })).rejects.toThrow(
      'injected crash',
    );
    expect(await suite.ledger.getRun(tenantId, 'crashed')).toBeUndefined();
    expect((await partition(tenantId, 'crashed')).items).toEqual([]);

    // The key was not taken by the failed attempt; the retry creates the run.
    await expect(suite.ledger.createRun({ tenantId, runId: 'kept', idempotencyKey: 'k-1', request })).resolves.toMatchObject({ created: true });
    // Another large request under the same run id conflicts, and its parts (same keys) are not written.
    const other = idsRequest(accountIds(100_000, 'other'));
    await expect(suite.ledger.createRun({ tenantId, runId: 'kept', request: other })).rejects.toBeInstanceOf(IdempotencyConflict);
    expect((await suite.ledger.getRun(tenantId, 'kept'))?.meta.universe).toEqual(request.universe);
  });

  it('does not show a round of large assignments whose dispatch died before the commit, and a retry completes it', async () => {
    const tenantId = uniqueName('tenant');
    const runId = uniqueName('run');
    const ids = accountIds(100_000, 'round');
    await suite.ledger.createRun({ tenantId, runId, request: idsRequest(ids) });
    // The subtasks and their parts are written, then the dispatch dies before the commit marker.
    const subtasks = [half(ids, 'A'), half(ids, 'B')];
    await expect(crashingAt('UpdateItemCommand', 1).appendRound({ tenantId, runId, round: 1, subtasks })).rejects.toThrow('injected crash');
    const partial = await suite.ledger.readManifest(tenantId, runId);
    expect(partial.manifest.subtasks).toEqual([]);
    expect(partial.uncommitted).toEqual(['A', 'B']);
    expect(toRunResource((await suite.ledger.getRun(tenantId, runId))!).subtasks).toEqual([]);

    await expect(suite.ledger.appendRound({ tenantId, runId, round: 1, subtasks })).resolves.toMatchObject({ written: 0, alreadyPresent: 2 });
    expect((await suite.ledger.readManifest(tenantId, runId)).manifest.subtasks.map((s) => s.assigned)).toEqual(subtasks.map((s) => s.assigned));
  });
});

/**
 * A ledger whose Queries return `limit` items a page and which runs `between` once, right after
 * the first page whose last key lies in `[from, to)`: a write landing between two pages of a read.
 */
const interleaving = (limit: number, from: string, to: string, between: () => Promise<void>): Ledger => {
  const base = dynamoClient();
  let done = false;
  base.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'QueryCommand') return next(args);
      (args.input as { Limit?: number }).Limit = limit;
      const result = await next(args);
      const last = (result.output as { LastEvaluatedKey?: { sk?: string } }).LastEvaluatedKey?.sk;
      if (!done && last !== undefined && last >= from && last < to) {
        done = true;
        await between();
      }
      return result;
    },
    { step: 'initialize', name: 'interleave' },
  );
  return ledgerFor({ tableName: suite.tableName, clock, client: documentClient(base), shards: 1 });
};

describe('reading a run while its large outcome is written', () => {
  it('finds the parts of an outcome committed between two pages of the partition read', async () => {
    // One partition whatever the suite's shard count: the page boundary this needs lies between
    // A's outcome parts and A's item, where only B's parts can sit when both share a partition.
    const unsharded = ledgerFor({ tableName: suite.tableName, clock, shards: 1 });
    const tenantId = uniqueName('tenant');
    const runId = uniqueName('run');
    // 10,000 ids: each half (80 KB) and its outcome go to parts.
    const ids = accountIds(10_000, 'pages');
    await unsharded.createRun({ tenantId, runId, request: idsRequest(ids) });
    await unsharded.appendRound({ tenantId, runId, round: 1, subtasks: [half(ids, 'A'), half(ids, 'B')] });
    const claim = await unsharded.claimSubtask({ tenantId, runId, subtaskId: 'A', workerId: 'w-1', leaseMs: 30_000 });
    const observed = [...ids.slice(0, 5_000)].sort();
    // Parts sort before the items owning them: the outcome lands after the read has passed where
    // its parts go (`PART#SUB#A#outcome#…`) and before it reaches `SUB#A`.
    const reader = interleaving(2, 'PART#SUB#A#outcome#', 'SUB#A', async () => {
      await unsharded.recordOutcome(claim, {
        subtaskId: 'A',
        state: 'ok',
        observed: { ids: observed, recordCount: 5_000 },
        sources: ['chaos'],
        sourcesReached: 1,
      });
    });
    const record = (await reader.getRun(tenantId, runId))!;
    expect(record.subtasks[0]).toMatchObject({ subtaskId: 'A', state: 'ok', outcome: { observed: { ids: observed, recordCount: 5_000 } } });
  });
});

describe('the largest request', () => {
  it('is refused before anything is written, naming the field that holds the bytes', async () => {
    const tenantId = uniqueName('tenant');
    // 120,000 ids of 15 characters: 2,160,000 bytes of JSON for universe.ids alone, over 2 MiB (2,097,152).
    const ids = accountIds(120_000);
    const refused = suite.ledger.createRun({ tenantId, runId: 'too-big', idempotencyKey: 'k', request: idsRequest(ids) });
    await expect(refused).rejects.toBeInstanceOf(RequestTooLarge);
    await expect(refused).rejects.toMatchObject({ field: 'universe.ids', fieldBytes: 120_000 * 18 - 1 + 2, limit: 2 * 1024 * 1024 });
    expect((await partition(tenantId, 'too-big')).items).toEqual([]);
    // The key is still free.
    await expect(suite.ledger.createRun({ tenantId, runId: 'fits', idempotencyKey: 'k', request: idsRequest(ids.slice(0, 100_000)) })).resolves.toMatchObject({
      created: true,
    });
  });
});
