import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BudgetExhausted, ImmutableAssignment, toRunResource, type Claim, type Ledger } from '../../lib/ledger';
import { uniqueName } from '../support/aws';
import { dispatched, ledgerFor, ledgerTestTable, okOutcome, settle, startRun, taxYearRequest } from './support';

const suite = ledgerTestTable('ledger-budget', { dailyAllowance: { modelCalls: 100_000, costLimit: 10_000_000 } });
const { clock } = suite;

const LONG_DEADLINE = '2040-06-05T00:00:00.000Z';

interface Allowances {
  readonly run: { modelCalls: number; costLimit: number };
  /** Per subtask: model calls and estimated cost per call. */
  readonly subtasks: Record<string, { modelCalls: number; estimatedCostPerCall: number }>;
}

/** Starts a run with the given budgets, claims every subtask, and returns the claims by id. */
const claimedRun = async (allowances: Allowances, on: Ledger = suite.ledger, tenantId = uniqueName('tenant')) => {
  const subtasks = Object.entries(allowances.subtasks).map(([id, budget], index) =>
    dispatched(id, `2025-0${index + 1}-01`, `2025-0${index + 2}-01`, { budget, deadline: LONG_DEADLINE }),
  );
  const runId = await startRun(on, tenantId, subtasks, taxYearRequest({ budget: allowances.run }));
  const claims: Record<string, Claim> = {};
  for (const { id } of subtasks) claims[id] = await on.claimSubtask({ tenantId, runId, subtaskId: id, workerId: `w-${id}`, leaseMs: 3_600_000 });
  const resource = async () => toRunResource((await on.getRun(tenantId, runId))!);
  return { tenantId, runId, claims, resource };
};

const limitsOf = (errors: unknown[]) => errors.map((error) => (error instanceof BudgetExhausted ? `${error.limit}:${error.counter}` : String(error)));

describe('concurrent reservations', () => {
  it('200 at once against a subtask allowance of 50: exactly 50 succeed and all counters agree', async () => {
    const { tenantId, claims, resource } = await claimedRun({
      run: { modelCalls: 1000, costLimit: 100_000 },
      subtasks: { A: { modelCalls: 50, estimatedCostPerCall: 3 } },
    });
    const { values, errors } = await settle(Array.from({ length: 200 }, () => suite.ledger.reserveBudget(claims.A!)));
    expect(values).toHaveLength(50);
    expect(new Set(limitsOf(errors))).toEqual(new Set(['subtask:calls']));
    expect(errors).toHaveLength(150);

    const view = await resource();
    expect(view.subtasks[0]?.usage).toEqual({ modelCalls: 50, estimatedCost: 150 });
    expect(view.usage).toEqual({ modelCalls: 50, estimatedCost: 150 });
    expect(await suite.ledger.tenantUsage(tenantId)).toMatchObject({ day: '2040-06-01', modelCalls: 50, estimatedCost: 150 });
  });

  it('200 at once across two subtasks against a run budget of 30 calls: exactly 30 succeed', async () => {
    const { tenantId, claims, resource } = await claimedRun({
      run: { modelCalls: 30, costLimit: 100_000 },
      subtasks: { A: { modelCalls: 50, estimatedCostPerCall: 2 }, B: { modelCalls: 50, estimatedCostPerCall: 2 } },
    });
    const { values, errors } = await settle(Array.from({ length: 200 }, (_, i) => suite.ledger.reserveBudget(i % 2 === 0 ? claims.A! : claims.B!)));
    expect(values).toHaveLength(30);
    expect(new Set(limitsOf(errors))).toEqual(new Set(['run:calls']));

    const view = await resource();
    const [a, b] = view.subtasks.map((s) => s.usage.modelCalls);
    expect(a! + b!).toBe(30);
    expect(view.usage).toEqual({ modelCalls: 30, estimatedCost: 60 });
    expect(await suite.ledger.tenantUsage(tenantId)).toMatchObject({ modelCalls: 30, estimatedCost: 60 });
  });

  it('stops at the run cost limit: 20 at 3 per call pays for 6 calls, the seventh needs 3 and finds 2', async () => {
    const { claims } = await claimedRun({ run: { modelCalls: 100, costLimit: 20 }, subtasks: { A: { modelCalls: 10, estimatedCostPerCall: 3 } } });
    for (let call = 0; call < 6; call += 1) await suite.ledger.reserveBudget(claims.A!);
    await expect(suite.ledger.reserveBudget(claims.A!)).rejects.toMatchObject({
      name: 'BudgetExhausted',
      limit: 'run',
      counter: 'cost',
      remaining: 2,
      requested: 3,
    });
  });
});

describe('the tenant daily allowance', () => {
  it('is shared by all runs of a tenant on a UTC day and starts afresh the next day', async () => {
    const daily = ledgerFor({ tableName: suite.tableName, clock, dailyAllowance: { modelCalls: 5, costLimit: 1000 } });
    const tenantId = uniqueName('tenant');
    const budgets = { run: { modelCalls: 40, costLimit: 500 }, subtasks: { A: { modelCalls: 4, estimatedCostPerCall: 7 } } };
    const first = await claimedRun(budgets, daily, tenantId);
    const second = await claimedRun(budgets, daily, tenantId);
    for (let call = 0; call < 4; call += 1) await daily.reserveBudget(first.claims.A!);
    await daily.reserveBudget(second.claims.A!);
    await expect(daily.reserveBudget(second.claims.A!)).rejects.toMatchObject({ name: 'BudgetExhausted', limit: 'tenant', counter: 'calls', remaining: 0 });

    const otherTenant = await claimedRun(budgets, daily);
    await expect(daily.reserveBudget(otherTenant.claims.A!)).resolves.toMatchObject({ day: '2040-06-01' });

    clock.set('2040-06-02T00:00:00.000Z');
    const renewed = await daily.claimSubtask({ tenantId, runId: second.runId, subtaskId: 'A', workerId: 'w-next-day', leaseMs: 60_000 });
    await expect(daily.reserveBudget(renewed)).resolves.toEqual({ modelCalls: 1, estimatedCost: 7, day: '2040-06-02' });
    expect(await daily.tenantUsage(tenantId, '2040-06-01')).toMatchObject({ modelCalls: 5, estimatedCost: 35 });
  });

  it('refuses outright a call that no day could pay for', async () => {
    const tight = ledgerFor({ tableName: suite.tableName, clock, dailyAllowance: { modelCalls: 10, costLimit: 5 } });
    const { claims, resource } = await claimedRun(
      { run: { modelCalls: 40, costLimit: 500 }, subtasks: { A: { modelCalls: 4, estimatedCostPerCall: 7 } } },
      tight,
    );
    await expect(tight.reserveBudget(claims.A!)).rejects.toMatchObject({ limit: 'tenant', counter: 'cost', remaining: 5, requested: 7 });
    expect((await resource()).usage).toEqual({ modelCalls: 0, estimatedCost: 0 });
  });
});

describe('what a reservation charges', () => {
  it('takes the cost per call from the stored assignment and refuses a claim that under-declares it', async () => {
    const { claims, resource } = await claimedRun({ run: { modelCalls: 40, costLimit: 500 }, subtasks: { A: { modelCalls: 4, estimatedCostPerCall: 7 } } });
    const cheaper: Claim = { ...claims.A!, subtask: { ...claims.A!.subtask, budget: { modelCalls: 4, estimatedCostPerCall: 0 } } };
    await expect(suite.ledger.reserveBudget(cheaper)).rejects.toBeInstanceOf(ImmutableAssignment);
    expect((await resource()).usage).toEqual({ modelCalls: 0, estimatedCost: 0 });
  });

  it('keeps reservations charged whatever the worker reports as its usage', async () => {
    const { claims, resource } = await claimedRun({ run: { modelCalls: 40, costLimit: 500 }, subtasks: { A: { modelCalls: 4, estimatedCostPerCall: 7 } } });
    await suite.ledger.reserveBudget(claims.A!);
    await suite.ledger.reserveBudget(claims.A!);
    await suite.ledger.recordOutcome(claims.A!, { ...okOutcome('A', '2025-01-02', '2025-01-31', 12), usage: { modelCalls: 0, estimatedCost: 0 } });
    const view = await resource();
    expect(view.subtasks[0]?.usage).toEqual({ modelCalls: 2, estimatedCost: 14 });
    expect(view.usage).toEqual({ modelCalls: 2, estimatedCost: 14 });
  });
});

describe('property: concurrent reservations never overspend', () => {
  it('grants min(run calls, Σ min(asked, allowance)) and the three totals agree', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          runCalls: fc.integer({ min: 1, max: 10 }),
          allowanceA: fc.integer({ min: 1, max: 6 }),
          allowanceB: fc.integer({ min: 1, max: 6 }),
          askA: fc.integer({ min: 0, max: 9 }),
          askB: fc.integer({ min: 0, max: 9 }),
        }),
        async ({ runCalls, allowanceA, allowanceB, askA, askB }) => {
          const { tenantId, claims, resource } = await claimedRun({
            run: { modelCalls: runCalls, costLimit: 10_000 },
            subtasks: { A: { modelCalls: allowanceA, estimatedCostPerCall: 1 }, B: { modelCalls: allowanceB, estimatedCostPerCall: 2 } },
          });
          const asks = [...Array<Claim>(askA).fill(claims.A!), ...Array<Claim>(askB).fill(claims.B!)];
          const { values, errors } = await settle(asks.map((claim) => suite.ledger.reserveBudget(claim)));
          const expected = Math.min(runCalls, Math.min(askA, allowanceA) + Math.min(askB, allowanceB));
          expect(values).toHaveLength(expected);
          expect(errors.every((error) => error instanceof BudgetExhausted)).toBe(true);
          const view = await resource();
          const [usedA, usedB] = view.subtasks.map((s) => s.usage);
          expect(usedA!.modelCalls).toBeLessThanOrEqual(Math.min(askA, allowanceA));
          expect(usedB!.modelCalls).toBeLessThanOrEqual(Math.min(askB, allowanceB));
          const cost = usedA!.modelCalls * 1 + usedB!.modelCalls * 2;
          expect(view.usage).toEqual({ modelCalls: expected, estimatedCost: cost });
          expect(await suite.ledger.tenantUsage(tenantId)).toMatchObject({ modelCalls: expected, estimatedCost: cost });
        },
      ),
      { numRuns: 8 },
    );
  });
});
