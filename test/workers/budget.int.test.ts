import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BudgetExhausted, createLedger, LeaseLost, ledgerTableDefinition, subtaskUsage, type Claim, type Ledger } from '../../lib/ledger';
import { createRegistry, defineWorker, runSubtask, userText } from '../../lib/workers';
import { createTable, documentClient, dynamoClient, uniqueName } from '../support/aws';
import { offlineModels } from './support/harness';

/**
 * The catering example's experiment, against DynamoDB Local through the real ledger: an allowance of three
 * model calls is spent exactly, the fourth call raises a typed error, and a replacement worker
 * (the next generation, after the first one's lease ran out) cannot get a fresh allowance.
 */

const TENANT = 'tenant-workers';
const ALLOWANCE = { modelCalls: 3, estimatedCostPerCall: 7 };
const LEASE_MS = 5_000;

/** Errors each worker generation saw from `ctx.model.call`, in order. */
const seen: unknown[] = [];

/** Calls the model until a call fails, remembering the failure, and reports how many went through. */
const spender = defineWorker({
  kind: 'spender',
  dimension: 'ids',
  label: 'nothing',
  recordNoun: 'calls',
  input: z.strictObject({ attempts: z.int().min(1) }),
  output: z.object({ calls: z.int() }),
  sources: {},
  // The offline model answers the worker's free-text task with this script.
  offlineScripts: { 'say-hi': () => ({ text: 'hi' }) },
  merge: () => ({}),
  run: async (ctx) => {
    let calls = 0;
    for (let attempt = 0; attempt < ctx.assignment.input.attempts; attempt += 1) {
      try {
        await ctx.model.call({ messages: [userText('hello')], task: 'say-hi' });
      } catch (error) {
        seen.push(error);
        throw error;
      }
      calls += 1;
    }
    return { calls };
  },
});

const registry = createRegistry([spender]);
const models = offlineModels();

let ledger: Ledger;
let clock = Date.now();

const dispatchRun = async (runId: string) => {
  await ledger.createRun({
    tenantId: TENANT,
    runId,
    request: {
      goal: 'Spend an allowance exactly',
      universe: { dimension: 'ids', ids: ['x'] },
      subtasks: [{ id: 'S', worker: 'spender', scope: { ids: ['x'] }, deadlineSeconds: 600, budget: ALLOWANCE, input: { attempts: 4 } }],
      budget: { modelCalls: 40, costLimit: 500 },
    },
  });
  await ledger.appendRound({
    tenantId: TENANT,
    runId,
    round: 1,
    dispatchedAt: new Date(clock).toISOString(),
    subtasks: [{ id: 'S', worker: 'spender', round: 1, assigned: { ids: ['x'] }, deadlineSeconds: 600, budget: ALLOWANCE, input: { attempts: 4 } }],
  });
};

const work = (claim: Claim) =>
  runSubtask({ subtask: claim.subtask, registry, models, budget: { reserve: () => ledger.reserveBudget(claim) }, now: () => clock });

beforeAll(async () => {
  const tableName = uniqueName('workers-budget');
  await createTable(dynamoClient(), ledgerTableDefinition(tableName));
  ledger = createLedger({ client: documentClient(), tableName, now: () => clock });
});

describe('the model allowance is durable across generations', () => {
  it('spends exactly the allowance, refuses the next call, and refuses a replacement too', async () => {
    const runId = uniqueName('run');
    await dispatchRun(runId);
    seen.length = 0;

    const first = await ledger.claimSubtask({ tenantId: TENANT, runId, subtaskId: 'S', workerId: 'first', leaseMs: LEASE_MS });
    const firstOutcome = await work(first);
    expect(firstOutcome).toMatchObject({ state: 'invalid', reason: 'budget exhausted: subtask calls', usage: { modelCalls: 3, estimatedCost: 21 } });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeInstanceOf(BudgetExhausted);
    expect(seen[0]).toMatchObject({ limit: 'subtask', counter: 'calls', remaining: 0 });

    // The first worker's lease runs out (say it crashed before recording); a replacement claims.
    clock += LEASE_MS + 1;
    const replacement = await ledger.claimSubtask({ tenantId: TENANT, runId, subtaskId: 'S', workerId: 'replacement', leaseMs: LEASE_MS });
    expect(replacement.generation).toBe(first.generation + 1);
    const replacementOutcome = await work(replacement);
    expect(replacementOutcome).toMatchObject({ state: 'invalid', reason: 'budget exhausted: subtask calls', usage: { modelCalls: 0, estimatedCost: 0 } });
    expect(seen).toHaveLength(2);
    expect(seen[1]).toBeInstanceOf(BudgetExhausted);

    const stored = await ledger.getSubtask({ tenantId: TENANT, runId, subtaskId: 'S' });
    expect(stored && subtaskUsage(stored)).toEqual({ modelCalls: 3, estimatedCost: 21 });
  });

  it('lets the stale generation learn that it lost its lease, instead of recording an outcome', async () => {
    const runId = uniqueName('run');
    await dispatchRun(runId);
    const first = await ledger.claimSubtask({ tenantId: TENANT, runId, subtaskId: 'S', workerId: 'first', leaseMs: LEASE_MS });
    clock += LEASE_MS + 1;
    await ledger.claimSubtask({ tenantId: TENANT, runId, subtaskId: 'S', workerId: 'replacement', leaseMs: LEASE_MS });
    await expect(work(first)).rejects.toBeInstanceOf(LeaseLost);
  });
});
