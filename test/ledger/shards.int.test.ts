/**
 * Write-sharded runs on DynamoDB Local (docs/ledger.md, "Write-sharded runs"): a run spread over
 * several partitions behaves exactly like one in a single partition, stays exact under
 * concurrency, and writes the partitions its shard count says.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { Answer } from '../../lib/contract';
import { AlreadySealed, BudgetExhausted, createLedger, toRunResource, type Claim, type Ledger } from '../../lib/ledger';
import { runPartition, shardOf, shardPartition, SORT_KEYS } from '../../lib/ledger/keys';
import { documentClient, uniqueName } from '../support/aws';
import { dispatched, ledgerFor, ledgerTestTable, okOutcome, settle, taxYearRequest, T0 } from './support';

const suite = ledgerTestTable('ledger-shards', { shards: 1 });
const { clock } = suite;

/** Every item of a run, from every partition whose key starts with the run's (a Scan: tests only). */
const runItems = async (tenantId: string, runId: string): Promise<{ pk: string; sk: string }[]> => {
  const prefix = runPartition(tenantId, runId);
  const items: { pk: string; sk: string }[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await documentClient().send(
      new ScanCommand({
        TableName: suite.tableName,
        FilterExpression: 'pk = :pk OR begins_with(pk, :shard)',
        ExpressionAttributeValues: { ':pk': prefix, ':shard': `${prefix}#S` },
        ProjectionExpression: 'pk, sk',
        ExclusiveStartKey: start,
      }),
    );
    items.push(...((page.Items ?? []) as { pk: string; sk: string }[]));
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return items;
};

const ids = (count: number, prefix = 's'): string[] => Array.from({ length: count }, (_, i) => `${prefix}-${String(i + 1).padStart(2, '0')}`);
const month = (i: number): string => `2025-${String(i + 1).padStart(2, '0')}-01`;

const answer: Answer = {
  text: 'done',
  result: {},
  coverage: {
    complete: false,
    missingQuestions: [],
    degradedReason: ['s-11:timed_out'],
    partitions: 12,
    overlaps: [],
    gaps: [],
    problems: [],
    statement: 'twelve months',
  },
};

describe.each([1, 4])('a run of %i shard(s)', (shards) => {
  const ledgerOf = (): Ledger => ledgerFor({ tableName: suite.tableName, clock, shards });

  it('goes through claim, reserve, outcome, seal, late evidence, reconcile, pages and finish', async () => {
    clock.set(T0);
    const ledger = ledgerOf();
    const tenantId = uniqueName('tenant');
    const runId = uniqueName('run');
    const all = ids(12);
    await ledger.createRun({ tenantId, runId, request: taxYearRequest() });
    await ledger.appendRound({ tenantId, runId, round: 1, subtasks: all.map((id, i) => dispatched(id, month(i), i === 11 ? '2026-01-01' : month(i + 1))) });

    const claims = new Map<string, Claim>();
    for (const id of all.slice(0, 11)) claims.set(id, await ledger.claimSubtask({ tenantId, runId, subtaskId: id, workerId: `w-${id}`, leaseMs: 30_000 }));
    for (const claim of claims.values()) await ledger.reserveBudget(claim);
    for (const id of all.slice(0, 10)) await ledger.recordOutcome(claims.get(id)!, okOutcome(id, month(all.indexOf(id)), month(all.indexOf(id)), 10));

    clock.set('2040-06-01T12:01:00.000Z');
    expect((await ledger.sealTimedOut({ tenantId, runId, subtaskId: 's-11' })).sealed).toBe(true);
    expect((await ledger.sealTimedOut({ tenantId, runId, subtaskId: 's-12' })).sealed).toBe(true);
    const late = ledger.recordOutcome(claims.get('s-11')!, okOutcome('s-11', '2025-11-01', '2025-11-30', 5));
    await expect(late).rejects.toBeInstanceOf(AlreadySealed);
    await expect(late).rejects.toMatchObject({ keptAsLateEvidence: true });

    const read = await ledger.readManifest(tenantId, runId);
    expect(read.manifest.subtasks.map((s) => s.id)).toEqual(all);
    expect(read.outcomes.map((o) => o.state)).toEqual([...Array(10).fill('ok'), 'timed_out', 'timed_out']);
    expect(read.unfinished).toEqual([]);
    expect(read.uncommitted).toEqual([]);

    const resource = toRunResource((await ledger.getRun(tenantId, runId))!);
    // 11 reservations of 7: s-01…s-11 each reserved once.
    expect(resource.usage).toEqual({ modelCalls: 11, estimatedCost: 77 });
    expect(resource.subtasks.map((s) => s.id)).toEqual(all);
    expect(resource.subtasks[10]?.late).toMatchObject([{ generation: 1, refusedBecause: 'sealed' }]);

    const pages: string[][] = [];
    const mores: boolean[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await ledger.subtaskPage({ tenantId, runId, limit: 5, ...(after === undefined ? {} : { after }) });
      if (page.kind !== 'page') throw new Error(`unexpected ${page.kind}`);
      pages.push(page.subtasks.map((s) => s.subtaskId));
      mores.push(page.more);
      if (page.subtasks.some((s) => s.subtaskId === 's-11')) expect(page.late.map((l) => l.subtaskId)).toEqual(['s-11']);
      else expect(page.late).toEqual([]);
      if (!page.more) break;
      after = page.subtasks.at(-1)!.subtaskId;
    }
    expect(pages).toEqual([all.slice(0, 5), all.slice(5, 10), all.slice(10)]);
    expect(mores).toEqual([true, true, false]);
    expect(await ledger.subtaskPage({ tenantId, runId, limit: 5, after: 's-13' })).toEqual({ kind: 'unknown_position' });

    await ledger.finishRun({ tenantId, runId, status: 'succeeded', answer });
    expect((await ledger.getRun(tenantId, runId))?.run.status).toBe('succeeded');

    const items = await runItems(tenantId, runId);
    const subtaskPartitions = new Set(items.filter((item) => item.sk.startsWith(SORT_KEYS.subtaskPrefix)).map((item) => item.pk));
    for (const item of items.filter((i) => i.sk.startsWith(SORT_KEYS.subtaskPrefix))) {
      expect(item.pk).toBe(shardPartition(tenantId, runId, shardOf(item.sk.slice(SORT_KEYS.subtaskPrefix.length), shards), shards));
    }
    const lateItem = items.find((item) => item.sk.startsWith(SORT_KEYS.latePrefix));
    expect(lateItem?.pk).toBe(shardPartition(tenantId, runId, shardOf('s-11', shards), shards));
    if (shards === 1) expect([...new Set(items.map((item) => item.pk))]).toEqual([runPartition(tenantId, runId)]);
    else {
      expect(subtaskPartitions.size).toBeGreaterThan(1);
      expect(subtaskPartitions.has(runPartition(tenantId, runId))).toBe(false);
      expect(
        items
          .filter((item) => item.pk === runPartition(tenantId, runId))
          .map((item) => item.sk)
          .sort(),
      ).toEqual(['META', 'RUN', 'SUMMARY']);
    }
  });

  it('reads every unfinished subtask in every shard as cancelled at once, and the closing sweeps them all', async () => {
    clock.set(T0);
    const ledger = ledgerOf();
    const tenantId = uniqueName('tenant');
    const runId = uniqueName('run');
    const all = ids(12, 'c');
    await ledger.createRun({ tenantId, runId, request: taxYearRequest() });
    await ledger.appendRound({ tenantId, runId, round: 1, subtasks: all.map((id, i) => dispatched(id, month(i), i === 11 ? '2026-01-01' : month(i + 1))) });
    const claim = await ledger.claimSubtask({ tenantId, runId, subtaskId: 'c-03', workerId: 'w', leaseMs: 30_000 });
    await ledger.recordOutcome(claim, okOutcome('c-03', '2025-03-01', '2025-03-31', 3));
    await ledger.registerWaiter({ tenantId, runId, subtaskId: 'c-07', taskToken: 'token-c-07' });

    await expect(ledger.cancelRun(tenantId, runId)).resolves.toEqual({ status: 'cancelled', answered: false });
    const states = toRunResource((await ledger.getRun(tenantId, runId))!).subtasks.map((s) => s.state);
    expect(states.filter((s) => s === 'cancelled')).toHaveLength(11);
    expect(states[2]).toBe('ok');
    // The cancel wrote no subtask: the closing finds all eleven still open, in every shard, and closes them.
    const closed = await ledger.finishRun({ tenantId, runId, status: 'cancelled', answer });
    expect([...closed.cancelledSubtaskIds].sort()).toEqual(all.filter((id) => id !== 'c-03'));
    expect(closed.taskTokens).toEqual(['token-c-07']);
    await expect(ledger.finishRun({ tenantId, runId, status: 'cancelled', answer })).resolves.toMatchObject({ cancelledSubtaskIds: [] });
  });
});

const limitsOf = (errors: unknown[]) => errors.map((error) => (error instanceof BudgetExhausted ? `${error.limit}:${error.counter}` : String(error)));

describe('concurrency across shards', () => {
  it('200 concurrent reservations over 20 subtasks in 8 shards against a run budget of 100: exactly 100 succeed', async () => {
    clock.set(T0);
    const ledger = ledgerFor({ tableName: suite.tableName, clock, shards: 8 });
    const tenantId = uniqueName('tenant');
    const runId = uniqueName('run');
    const all = ids(20, 'p');
    await ledger.createRun({ tenantId, runId, request: taxYearRequest({ budget: { modelCalls: 100, costLimit: 100_000 } }) });
    await ledger.appendRound({
      tenantId,
      runId,
      round: 1,
      subtasks: all.map((id) =>
        dispatched(id, '2025-01-01', '2025-02-01', { budget: { modelCalls: 8, estimatedCostPerCall: 1 }, deadline: '2040-06-05T00:00:00.000Z' }),
      ),
    });
    expect(new Set(all.map((id) => shardOf(id, 8))).size).toBeGreaterThan(3);
    const claims = await Promise.all(all.map((id) => ledger.claimSubtask({ tenantId, runId, subtaskId: id, workerId: `w-${id}`, leaseMs: 3_600_000 })));

    const { values, errors } = await settle(Array.from({ length: 200 }, (_, i) => ledger.reserveBudget(claims[i % 20]!)));
    expect(values).toHaveLength(100);
    expect(errors).toHaveLength(100);
    for (const limit of limitsOf(errors)) expect(['run:calls', 'subtask:calls']).toContain(limit);

    const resource = toRunResource((await ledger.getRun(tenantId, runId))!);
    expect(resource.usage).toEqual({ modelCalls: 100, estimatedCost: 100 });
    const perSubtask = resource.subtasks.map((s) => s.usage.modelCalls);
    expect(perSubtask.reduce((a, b) => a + b, 0)).toBe(100);
    expect(Math.max(...perSubtask)).toBeLessThanOrEqual(8);
    expect(await ledger.tenantUsage(tenantId)).toMatchObject({ modelCalls: 100, estimatedCost: 100 });

    // Every outcome delivered twice at once: one record and one duplicate each.
    const outcomes = await settle(
      claims.flatMap((claim) => [0, 1].map(() => ledger.recordOutcome(claim, okOutcome(claim.subtaskId, '2025-01-01', '2025-01-31', 1)))),
    );
    expect(outcomes.errors).toEqual([]);
    expect(outcomes.values.filter((v) => v.duplicate)).toHaveLength(20);
    expect((await ledger.readManifest(tenantId, runId)).outcomes).toHaveLength(20);
  });

  it('a claim without its shard count (an older message or client) still finds its item', async () => {
    clock.set(T0);
    const ledger = ledgerFor({ tableName: suite.tableName, clock, shards: 4 });
    const tenantId = uniqueName('tenant');
    const runId = uniqueName('run');
    await ledger.createRun({ tenantId, runId, request: taxYearRequest() });
    await ledger.appendRound({ tenantId, runId, round: 1, subtasks: ids(8, 'q').map((id) => dispatched(id, '2025-01-01', '2025-02-01')) });
    const claim = await ledger.claimSubtask({ tenantId, runId, subtaskId: 'q-05', workerId: 'w', leaseMs: 30_000 });
    expect(claim.shards).toBe(4);
    // Another process: a fresh ledger that has never seen the run, and a claim without `shards`.
    const { shards: _shards, ...bare } = claim;
    const other = ledgerFor({ tableName: suite.tableName, clock, shards: 4 });
    await other.reserveBudget(bare);
    await other.recordOutcome(bare, okOutcome('q-05', '2025-01-01', '2025-01-31', 2));
    const item = await other.getSubtask({ tenantId, runId, subtaskId: 'q-05' });
    expect(item).toMatchObject({ state: 'ok', callsLeft: 3, pk: shardPartition(tenantId, runId, shardOf('q-05', 4), 4) });
  });
});

describe('the key layout of a large run', () => {
  it('a 1,200-subtask plan writes its subtasks to ⌈1200 / 500⌉ = 3 shards beside the run partition; a 500-subtask plan to one partition', async () => {
    clock.set(T0);
    const ledger = ledgerFor({ tableName: suite.tableName, clock, shards: 1 });
    const tenantId = uniqueName('tenant');
    const large = uniqueName('run');
    const small = uniqueName('run');
    await ledger.createRun({ tenantId, runId: large, request: taxYearRequest(), plannedSubtasks: 1200 });
    await ledger.createRun({ tenantId, runId: small, request: taxYearRequest(), plannedSubtasks: 500 });
    const subtasks = Array.from({ length: 1200 }, (_, i) => dispatched(`x-${String(i).padStart(4, '0')}`, '2025-01-01', '2025-02-01'));
    await ledger.appendRound({ tenantId, runId: large, round: 1, subtasks });
    await ledger.appendRound({ tenantId, runId: small, round: 1, subtasks: subtasks.slice(0, 500) });

    const items = await runItems(tenantId, large);
    const byPartition = new Map<string, number>();
    for (const item of items) byPartition.set(item.pk, (byPartition.get(item.pk) ?? 0) + 1);
    const base = runPartition(tenantId, large);
    expect([...byPartition.keys()].sort()).toEqual([base, `${base}#S0`, `${base}#S1`, `${base}#S2`]);
    expect(byPartition.get(base)).toBe(3);
    const perShard = [0, 1, 2].map((k) => byPartition.get(`${base}#S${k}`) ?? 0);
    expect(perShard.reduce((a, b) => a + b, 0)).toBe(1200);
    // A fair hash puts 400 ± 16 (one standard deviation) in each; 300 is six deviations off.
    for (const count of perShard) expect(count).toBeGreaterThan(300);

    expect(new Set((await runItems(tenantId, small)).map((item) => item.pk))).toEqual(new Set([runPartition(tenantId, small)]));
    expect((await ledger.readManifest(tenantId, large)).manifest.subtasks).toHaveLength(1200);
  });
});

describe('a page of a sharded run', () => {
  it('merges 8 shards lazily: every page in id order, each reading far fewer than 8 × (page + 1) subtask items', async () => {
    clock.set(T0);
    const ledger = ledgerFor({ tableName: suite.tableName, clock, shards: 8 });
    const tenantId = uniqueName('tenant');
    const runId = uniqueName('run');
    const all = Array.from({ length: 200 }, (_, i) => `m-${String(i).padStart(3, '0')}`);
    await ledger.createRun({ tenantId, runId, request: taxYearRequest() });
    await ledger.appendRound({ tenantId, runId, round: 1, subtasks: all.map((id) => dispatched(id, '2025-01-01', '2025-02-01')) });

    const client = documentClient();
    const scanned: number[] = [];
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const result = await next(args);
        const input = args.input as { KeyConditionExpression?: string; ExpressionAttributeValues?: Record<string, unknown> };
        const onSubtasks =
          context.commandName === 'QueryCommand' && Object.values(input.ExpressionAttributeValues ?? {}).some((v) => String(v).startsWith('SUB#'));
        if (onSubtasks) scanned.push((result.output as { ScannedCount?: number }).ScannedCount ?? 0);
        return result;
      },
      { step: 'initialize', name: 'countSubtaskReads' },
    );
    const reader = createLedger({ client, tableName: suite.tableName, now: clock.now });
    const pages: string[][] = [];
    const perPage: number[] = [];
    let after: string | undefined;
    do {
      scanned.length = 0;
      const page = await reader.subtaskPage({ tenantId, runId, limit: 10, ...(after === undefined ? {} : { after }) });
      if (page.kind !== 'page') throw new Error(page.kind);
      pages.push(page.subtasks.map((s) => s.subtaskId));
      perPage.push(scanned.reduce((a, b) => a + b, 0));
      after = page.more ? page.subtasks.at(-1)?.subtaskId : undefined;
    } while (after !== undefined);
    expect(pages).toEqual(Array.from({ length: 20 }, (_, page) => all.slice(page * 10, page * 10 + 10)));
    // 200 subtasks are about 25 a shard, so reading every shard for a whole page plus one (and the
    // cursor) would scan 8 × 11 = 88 or 8 × 12 = 96 items for each of the first pages.
    for (const count of perPage.slice(0, 10)) expect(count).toBeLessThan(8 * 11);
    // A page needs at least its 10 items and one more (and the cursor after the first page).
    for (const count of perPage.slice(0, -1)) expect(count).toBeGreaterThanOrEqual(11);
  });
});
