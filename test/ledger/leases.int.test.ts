import { describe, expect, it } from 'vitest';
import { BudgetExhausted, type Claim, type Ledger } from '../../lib/ledger';
import { getItem } from '../../lib/ledger/io';
import { parseItem, RunItem, TenantDayItem } from '../../lib/ledger/items';
import { runKey, tenantDayKey } from '../../lib/ledger/keys';
import { BLOCK_LEASE_MS } from '../../lib/ledger/leases';
import { DEFAULT_CONFLICT_RETRY } from '../../lib/ledger/failures';
import { documentClient, uniqueName } from '../support/aws';
import { runTrials } from './lease-trials';
import { dispatched, ledgerFor, ledgerTestTable, settle, startRun, taxYearRequest } from './support';

const suite = ledgerTestTable('ledger-leases');
const { clock } = suite;
const LONG_DEADLINE = '2040-06-05T00:00:00.000Z';

/** A ledger of this file's table with a daily allowance of `calls` calls (and `cost`, ample by default). */
const withAllowance = (calls: number, cost = 1_000_000): Ledger =>
  ledgerFor({ tableName: suite.tableName, clock, dailyAllowance: { modelCalls: calls, costLimit: cost } });

/** A running run of `tenantId` with `subtasks` subtasks of ample budget, each claimed; returns the claims. */
const claimedRun = async (ledger: Ledger, tenantId: string, subtasks = 1, costPerCall = 1) => {
  const ids = ['A', 'B', 'C', 'D'].slice(0, subtasks);
  const budget = { modelCalls: 1_000, estimatedCostPerCall: costPerCall };
  const runId = await startRun(
    ledger,
    tenantId,
    ids.map((id, index) => dispatched(id, `2025-0${index + 1}-01`, `2025-0${index + 2}-01`, { budget, deadline: LONG_DEADLINE })),
    taxYearRequest({ budget: { modelCalls: 5_000, costLimit: 1_000_000 } }),
  );
  const claims: Claim[] = [];
  for (const id of ids) claims.push(await ledger.claimSubtask({ tenantId, runId, subtaskId: id, workerId: `w-${id}`, leaseMs: 24 * 3600 * 1000 }));
  return { runId, claims };
};

const ctxFor = () => ({
  client: documentClient(),
  tableName: suite.tableName,
  now: clock.now,
  dailyAllowance: undefined,
  conflictRetry: DEFAULT_CONFLICT_RETRY,
  newId: () => '',
});
const dayItem = async (tenantId: string, day = '2040-06-01') => {
  const item = await getItem(ctxFor(), tenantDayKey(tenantId, day));
  return item === undefined ? undefined : parseItem(TenantDayItem, item, { tenantId });
};
const runItem = async (tenantId: string, runId: string) => parseItem(RunItem, await getItem(ctxFor(), runKey(tenantId, runId)), { tenantId });
const tenantRefusals = (errors: unknown[]) => errors.filter((error) => error instanceof BudgetExhausted && error.limit === 'tenant');

describe('a tenant allowance shared through leased blocks', () => {
  it('200 concurrent reservations against an allowance of 150: exactly 150 succeed, 50 are refused for the tenant', async () => {
    const ledger = withAllowance(150);
    const tenantId = uniqueName('tenant');
    const { claims } = await claimedRun(ledger, tenantId, 4);
    const { values, errors } = await settle(Array.from({ length: 200 }, (_, i) => ledger.reserveBudget(claims[i % 4]!)));
    expect(values).toHaveLength(150);
    expect(tenantRefusals(errors)).toHaveLength(50);
    expect(errors).toHaveLength(50);
    // Nobody else holds a block, so the refusals came only once the day had granted everything.
    expect(await ledger.tenantUsage(tenantId)).toMatchObject({ modelCalls: 150, estimatedCost: 150, held: { modelCalls: 0 } });
    expect(await dayItem(tenantId)).toMatchObject({ callsCommitted: 150, grants: 1 });
  }, 180_000);

  it('two runs of one tenant competing: the sum never exceeds the allowance, and a refusal leaves nothing unleased', async () => {
    const ledger = withAllowance(120);
    const tenantId = uniqueName('tenant');
    const first = await claimedRun(ledger, tenantId, 2);
    const second = await claimedRun(ledger, tenantId, 2);
    const asks = Array.from({ length: 200 }, (_, i) => ledger.reserveBudget((i % 2 === 0 ? first : second).claims[i % 4 < 2 ? 0 : 1]!));
    const { values, errors } = await settle(asks);
    expect(errors.every((error) => error instanceof BudgetExhausted && error.limit === 'tenant')).toBe(true);
    const usage = await ledger.tenantUsage(tenantId);
    expect(usage.modelCalls).toBe(values.length);
    expect(values.length).toBeLessThanOrEqual(120);
    // The slack rule: a call is refused only when the day has nothing unleased; what it did not
    // grant is held, unspent, in the other run's block.
    expect(usage.modelCalls + usage.held.modelCalls).toBe(120);

    // Ending both runs returns their blocks: a third run gets exactly what they did not spend.
    await ledger.cancelRun(tenantId, first.runId);
    await ledger.cancelRun(tenantId, second.runId);
    expect((await ledger.tenantUsage(tenantId)).held).toEqual({ modelCalls: 0, estimatedCost: 0 });
    const third = await claimedRun(ledger, tenantId, 1);
    const rest = await settle(Array.from({ length: 130 }, () => ledger.reserveBudget(third.claims[0]!)));
    expect(rest.values).toHaveLength(120 - values.length);
    expect(await ledger.tenantUsage(tenantId)).toMatchObject({ modelCalls: 120, held: { modelCalls: 0 } });
  }, 180_000);

  it("a crashed holder's block comes back when its lease expires, and not before", async () => {
    const ledger = withAllowance(10);
    const tenantId = uniqueName('tenant');
    const crashed = await claimedRun(ledger, tenantId);
    await ledger.reserveBudget(crashed.claims[0]!);
    // Its first block is at most half the day (5 calls); it spent one and holds four, then crashes.
    expect(await runItem(tenantId, crashed.runId)).toMatchObject({ blockCalls: 5, blockCallsLeft: 4 });

    const survivor = await claimedRun(ledger, tenantId);
    const spend = async (): Promise<number> => {
      let granted = 0;
      for (;;) {
        try {
          await ledger.reserveBudget(survivor.claims[0]!);
          granted += 1;
        } catch (error) {
          expect(error).toMatchObject({ name: 'BudgetExhausted', limit: 'tenant', counter: 'calls', remaining: 0 });
          return granted;
        }
      }
    };
    expect(await spend()).toBe(5);
    clock.advance(BLOCK_LEASE_MS - 1);
    expect(await spend()).toBe(0);
    expect(await ledger.tenantUsage(tenantId)).toMatchObject({ modelCalls: 6, held: { modelCalls: 4 } });

    clock.advance(1);
    expect(await spend()).toBe(4);
    expect(await ledger.tenantUsage(tenantId)).toMatchObject({ modelCalls: 10, held: { modelCalls: 0 } });
    const after = await runItem(tenantId, crashed.runId);
    expect(after.blockId).toBeUndefined();
    // Reclaimed once: the day settled the one call the crashed run charged, nothing twice.
    expect(await dayItem(tenantId)).toMatchObject({ callsCommitted: 10 });
    // The crashed run, if it wakes up, finds the day spent.
    await expect(ledger.reserveBudget(crashed.claims[0]!)).rejects.toMatchObject({ limit: 'tenant' });
  });

  it('a block belongs to one UTC day: the next day returns its rest to its own day and leases afresh', async () => {
    const ledger = withAllowance(100);
    const tenantId = uniqueName('tenant');
    clock.set('2040-06-01T23:59:59.000Z');
    const { runId, claims } = await claimedRun(ledger, tenantId);
    for (let call = 0; call < 3; call += 1) await ledger.reserveBudget(claims[0]!);
    clock.set('2040-06-02T00:00:00.000Z');
    await expect(ledger.reserveBudget(claims[0]!)).resolves.toMatchObject({ day: '2040-06-02' });
    expect(await ledger.tenantUsage(tenantId, '2040-06-01')).toMatchObject({ modelCalls: 3, held: { modelCalls: 0 } });
    expect(await dayItem(tenantId, '2040-06-01')).toMatchObject({ callsUsed: 3, callsCommitted: 3 });
    expect(await ledger.tenantUsage(tenantId, '2040-06-02')).toMatchObject({ modelCalls: 1 });
    expect(await runItem(tenantId, runId)).toMatchObject({ blockDay: '2040-06-02' });
  });

  it('finishing a run returns the unspent rest of its block, once', async () => {
    const ledger = withAllowance(100);
    const tenantId = uniqueName('tenant');
    const { runId, claims } = await claimedRun(ledger, tenantId);
    for (let call = 0; call < 4; call += 1) await ledger.reserveBudget(claims[0]!);
    expect((await ledger.tenantUsage(tenantId)).held.modelCalls).toBeGreaterThan(0);
    await ledger.cancelRun(tenantId, runId);
    await ledger.cancelRun(tenantId, runId);
    expect(await ledger.tenantUsage(tenantId)).toMatchObject({ modelCalls: 4, held: { modelCalls: 0 } });
    expect(await dayItem(tenantId)).toMatchObject({ callsUsed: 4, callsCommitted: 4 });
  });

  it('without an allowance, a run writes the day item once per block, not once per call', async () => {
    const ledger = ledgerFor({ tableName: suite.tableName, clock });
    const tenantId = uniqueName('tenant');
    const { runId, claims } = await claimedRun(ledger, tenantId);
    for (let call = 0; call < 20; call += 1) await ledger.reserveBudget(claims[0]!);
    // The one block is the run's whole budget (5,000 calls): one grant, and usage still exact.
    expect(await dayItem(tenantId)).toMatchObject({ grants: 1, callsCommitted: 5_000, callsUsed: 0 });
    expect(await runItem(tenantId, runId)).toMatchObject({ blockCalls: 5_000, blockCallsLeft: 4_980 });
    expect(await ledger.tenantUsage(tenantId)).toMatchObject({ modelCalls: 20, estimatedCost: 20, allowance: undefined });
  });
});

describe('randomized contention trials', () => {
  it('100 seeded trials: charged never exceeds the allowance, and blocks plus the day remainder add up exactly', async () => {
    const results = await runTrials(documentClient(), suite.tableName, 100, 1, 16);
    const failures = results.filter((result) => result.problems.length > 0);
    expect(failures.map((f) => ({ seed: f.seed, problems: f.problems.slice(0, 3) }))).toEqual([]);
    // The trials did contend: most reservations were refused or granted across several blocks and days.
    expect(results.reduce((n, r) => n + r.refusals, 0)).toBeGreaterThan(0);
    expect(results.some((r) => r.days > 1)).toBe(true);
  }, 600_000);
});
