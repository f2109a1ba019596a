/**
 * Randomized contention trials of leased tenant-day allowances, on DynamoDB Local.
 *
 * One trial is one tenant with a random daily allowance and one to three runs with random
 * budgets. In two or three phases, every live run fires a random number of concurrent
 * reservations; then each run may crash (stops spending and never ends, so its block is only ever
 * reclaimed), be cancelled (its block returned) or carry on, and the clock moves on by nothing, a
 * little, or past the block lease; the clock starts two minutes before midnight UTC, so some
 * trials roll over into the next day. After every phase, every day the trial touched is checked:
 *
 * - calls and cost charged (reported by `tenantUsage`) equal the reservations that succeeded on
 *   that day, and never exceed the allowance;
 * - the day item's committed counters equal its settled usage plus the full size of every block
 *   held on that day (the blocks leased and the day's remainder add up exactly);
 * - every refusal is a `BudgetExhausted`.
 *
 * At the end the surviving runs are cancelled, the clock passes every lease, and a fresh run
 * spends whatever the day has left: it must end exactly at the allowance (calls or cost), so no
 * block, crashed or returned, was lost.
 *
 * Trials run in parallel on distinct tenants of one table. Seeded: a failing seed reproduces.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { BudgetExhausted, createLedger, type Claim, type DailyAllowance, type Ledger } from '../../lib/ledger';
import { getItem, type LedgerContext } from '../../lib/ledger/io';
import { parseItem, RunItem, TenantDayItem } from '../../lib/ledger/items';
import { runKey, tenantDayKey } from '../../lib/ledger/keys';
import { BLOCK_LEASE_MS } from '../../lib/ledger/leases';
import { DEFAULT_CONFLICT_RETRY } from '../../lib/ledger/failures';
import type { DispatchedSubtask, RunRequestInput } from '../../lib/contract';

/** A small seeded generator (mulberry32), so a trial is reproduced from its seed. */
export const seeded = (seed: number) => {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (min: number, max: number): number => min + Math.floor(next() * (max - min + 1)) };
};

const TRIAL_START = '2040-06-01T23:57:00.000Z';
const FAR_DEADLINE = '2040-06-09T00:00:00.000Z';
const CLAIM_LEASE_MS = 24 * 3600 * 1000;

interface TrialRun {
  readonly runId: string;
  readonly claims: Claim[];
  fate: 'live' | 'crashed' | 'cancelled';
}

/** What one trial found wrong; empty when every invariant held. */
export interface TrialResult {
  readonly seed: number;
  readonly problems: string[];
  readonly reservations: number;
  readonly refusals: number;
  readonly days: number;
}

const request = (subtasks: readonly DispatchedSubtask[], budget: { modelCalls: number; costLimit: number }): RunRequestInput => ({
  goal: 'Leased allowance trial',
  universe: { dimension: 'time', from: '2025-01-01', toExclusive: '2026-01-01' },
  subtasks: subtasks.map((s) => ({
    id: s.id,
    worker: 'tax-statements',
    questionIds: ['q1'],
    required: true,
    justification: 'trial',
    scope: s.assigned,
    deadlineSeconds: 60,
    budget: s.budget ?? { modelCalls: 1, estimatedCostPerCall: 0 },
  })),
  budget,
});

const subtask = (id: string, month: number, budget: { modelCalls: number; estimatedCostPerCall: number }): DispatchedSubtask => {
  const from = `2025-${String(month).padStart(2, '0')}-01`;
  const toExclusive = month === 12 ? '2026-01-01' : `2025-${String(month + 1).padStart(2, '0')}-01`;
  return {
    id,
    worker: 'tax-statements',
    questionIds: ['q1'],
    required: true,
    justification: 'trial',
    round: 1,
    assigned: { from, toExclusive },
    deadline: FAR_DEADLINE,
    budget,
  };
};

/** Creates a run with the given subtask budgets, dispatches it and claims every subtask. */
const startClaimedRun = async (
  ledger: Ledger,
  tenantId: string,
  runId: string,
  budget: { modelCalls: number; costLimit: number },
  perCall: readonly { modelCalls: number; estimatedCostPerCall: number }[],
) => {
  const subtasks = perCall.map((b, index) => subtask(String.fromCharCode(65 + index), index + 1, b));
  await ledger.createRun({ tenantId, runId, request: request(subtasks, budget) });
  await ledger.appendRound({ tenantId, runId, round: 1, subtasks });
  const claims: Claim[] = [];
  for (const s of subtasks) claims.push(await ledger.claimSubtask({ tenantId, runId, subtaskId: s.id, workerId: `w-${s.id}`, leaseMs: CLAIM_LEASE_MS }));
  return claims;
};

/** One trial on its own tenant; returns the broken invariants. */
export const runTrial = async (client: DynamoDBDocumentClient, tableName: string, seed: number): Promise<TrialResult> => {
  const rng = seeded(seed);
  const tenantId = `trial-${seed}-${Math.floor(Math.random() * 1e9).toString(36)}`;
  let now = Date.parse(TRIAL_START);
  const allowance: DailyAllowance = { modelCalls: rng.int(1, 20), costLimit: rng.int(10, 150) };
  const ledger = createLedger({ client, tableName, now: () => now, dailyAllowance: allowance });
  const ctx: LedgerContext = { client, tableName, now: () => now, dailyAllowance: allowance, conflictRetry: DEFAULT_CONFLICT_RETRY, newId: () => '' };
  const problems: string[] = [];
  const charged = new Map<string, { calls: number; cost: number }>();
  let reservations = 0;
  let refusals = 0;

  const runs: TrialRun[] = [];
  const runCount = rng.int(1, 3);
  for (let r = 0; r < runCount; r += 1) {
    const perCall = Array.from({ length: rng.int(1, 2) }, () => ({ modelCalls: rng.int(3, 20), estimatedCostPerCall: rng.int(0, 6) }));
    const runId = `run-${r}`;
    const claims = await startClaimedRun(ledger, tenantId, runId, { modelCalls: rng.int(3, 30), costLimit: rng.int(20, 200) }, perCall);
    runs.push({ runId, claims, fate: 'live' });
  }

  const reserve = async (claim: Claim): Promise<void> => {
    try {
      const done = await ledger.reserveBudget(claim);
      reservations += 1;
      const day = charged.get(done.day) ?? { calls: 0, cost: 0 };
      charged.set(done.day, { calls: day.calls + 1, cost: day.cost + done.estimatedCost });
    } catch (error) {
      refusals += 1;
      if (!(error instanceof BudgetExhausted)) problems.push(`refusal that is not BudgetExhausted: ${String(error)}`);
    }
  };

  const check = async (when: string): Promise<void> => {
    for (const [day, expected] of charged) {
      const usage = await ledger.tenantUsage(tenantId, day);
      if (usage.modelCalls !== expected.calls || usage.estimatedCost !== expected.cost) {
        problems.push(
          `${when} ${day}: tenantUsage says ${usage.modelCalls} calls / ${usage.estimatedCost} cost, reservations charged ${expected.calls} / ${expected.cost}`,
        );
      }
      if (expected.calls > allowance.modelCalls || expected.cost > allowance.costLimit)
        problems.push(`${when} ${day}: charged ${expected.calls}/${expected.cost} past the allowance`);
      const dayImage = await getItem(ctx, tenantDayKey(tenantId, day));
      const dayItem = dayImage === undefined ? undefined : parseItem(TenantDayItem, dayImage, { tenantId });
      let heldCalls = 0;
      let heldCost = 0;
      for (const run of runs) {
        const item = parseItem(RunItem, await getItem(ctx, runKey(tenantId, run.runId)), { tenantId });
        if (item.blockDay === day) {
          heldCalls += item.blockCalls ?? 0;
          heldCost += item.blockCost ?? 0;
        }
      }
      const settled = { calls: dayItem?.callsUsed ?? 0, cost: dayItem?.costUsed ?? 0 };
      const committed = { calls: dayItem?.callsCommitted ?? 0, cost: dayItem?.costCommitted ?? 0 };
      if (committed.calls !== settled.calls + heldCalls || committed.cost !== settled.cost + heldCost) {
        problems.push(
          `${when} ${day}: committed ${committed.calls}/${committed.cost} != settled ${settled.calls}/${settled.cost} + held blocks ${heldCalls}/${heldCost}`,
        );
      }
      if (committed.calls > allowance.modelCalls || committed.cost > allowance.costLimit)
        problems.push(`${when} ${day}: committed ${committed.calls}/${committed.cost} past the allowance`);
    }
  };

  const phases = rng.int(2, 3);
  for (let phase = 1; phase <= phases; phase += 1) {
    const asks = runs
      .filter((run) => run.fate === 'live')
      .flatMap((run) => Array.from({ length: rng.int(0, 8) }, () => run.claims[rng.int(0, run.claims.length - 1)]!));
    await Promise.all(asks.map(reserve));
    await check(`phase ${phase}`);
    for (const run of runs.filter((r) => r.fate === 'live')) {
      const fate = rng.int(0, 5);
      if (fate === 0) run.fate = 'crashed';
      if (fate === 1) {
        await ledger.cancelRun(tenantId, run.runId);
        run.fate = 'cancelled';
      }
    }
    now += [0, 20_000, BLOCK_LEASE_MS + 1_000][rng.int(0, 2)]!;
    await check(`after phase ${phase}`);
  }

  // Nothing lost: end the survivors, let every lease expire, and spend what the day has left.
  for (const run of runs.filter((r) => r.fate === 'live')) await ledger.cancelRun(tenantId, run.runId);
  now += BLOCK_LEASE_MS + 1_000;
  const sweeperId = 'run-sweeper';
  const [sweeper] = await startClaimedRun(ledger, tenantId, sweeperId, { modelCalls: 1_000, costLimit: 100_000 }, [
    { modelCalls: 1_000, estimatedCostPerCall: 1 },
  ]);
  runs.push({ runId: sweeperId, claims: [sweeper!], fate: 'live' });
  for (let call = 0; call <= allowance.modelCalls; call += 1) {
    const before = refusals;
    await reserve(sweeper!);
    if (refusals > before) break;
  }
  const today = new Date(now).toISOString().slice(0, 10);
  const spent = charged.get(today) ?? { calls: 0, cost: 0 };
  if (spent.calls !== allowance.modelCalls && spent.cost !== allowance.costLimit) {
    problems.push(
      `after the sweep ${today}: charged ${spent.calls}/${spent.cost}, the allowance is ${allowance.modelCalls}/${allowance.costLimit}: some allowance never came back`,
    );
  }
  await check('after the sweep');
  return { seed, problems, reservations, refusals, days: charged.size };
};

/** Runs `count` trials from `firstSeed` on, `parallel` at a time, each on its own tenant. */
export const runTrials = async (
  client: DynamoDBDocumentClient,
  tableName: string,
  count: number,
  firstSeed: number,
  parallel: number,
): Promise<TrialResult[]> => {
  const results: TrialResult[] = [];
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      const seed = firstSeed + next++;
      results.push(await runTrial(client, tableName, seed));
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, lane));
  return results.sort((a, b) => a.seed - b.seed);
};
