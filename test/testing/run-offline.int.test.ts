import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createLedger, ledgerTableDefinition, toOutcome, type Ledger } from '../../lib/ledger';
import { createTestClock, runOffline, type RunOfflineOptions } from '../../lib/testing';
import { createModelProvider, createRegistry, defineWorker, keyedSource, parseModelConfig, runSubtask, userText } from '../../lib/workers';
import { createTable, documentClient, dynamoClient, uniqueName } from '../support/aws';

/**
 * runOffline must say what the pipeline records. Each case runs the same subtask twice: once
 * offline, once as the worker Lambda does it against DynamoDB Local (claim, runSubtask with the
 * ledger as the budget port, recordOutcome, or the seal at the deadline), and the outcome the
 * ledger then holds must equal runOffline's.
 */

const TENANT = 'tenant-offline';

/**
 * Resolves when the probe starts waiting for its deadline, after its model calls: the clock is
 * advanced only then. (A fixed pause let a loaded machine advance it before the call was made.)
 */
let waiting: { reached: Promise<void>; resolve: () => void };
const expectWait = () => {
  let resolve = () => {};
  const reached = new Promise<void>((r) => (resolve = r));
  waiting = { reached, resolve };
};
const START = Date.parse('2025-06-01T12:00:00.000Z');
const DEADLINE_SECONDS = 30;

const probe = defineWorker({
  kind: 'probe',
  dimension: 'ids',
  label: 'probe source',
  recordNoun: 'records',
  input: z.strictObject({ calls: z.int().default(0), blob: z.int().default(0), waitForDeadline: z.boolean().default(false) }),
  output: z.object({ rows: z.int(), blob: z.string().optional() }),
  sources: {
    records: keyedSource({
      description: 'records by id',
      args: z.object({ id: z.string() }),
      idOf: (args) => args.id,
      load: async ({ id }) => ({ source: `store:${id}`, rows: id === 'empty' ? [] : [{ id }, { id }] }),
    }),
  },
  offlineScripts: { think: () => ({ text: 'ok' }) },
  merge: () => ({}),
  run: async (ctx) => {
    const { calls, blob, waitForDeadline } = ctx.assignment.input;
    for (let i = 0; i < calls; i += 1) await ctx.model.call({ task: 'think', messages: [userText('think')] });
    if (waitForDeadline) {
      const aborted = new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
      waiting.resolve();
      await aborted;
    }
    let rows = 0;
    for (const id of ctx.assignment.scope.ids) rows += (await ctx.tools.records({ id })).length;
    return blob > 0 ? { rows, blob: 'x'.repeat(blob) } : { rows };
  },
});
const registry = createRegistry([probe]);
const models = createModelProvider({ config: parseModelConfig({}) });

let ledger: Ledger;
let now = START;

beforeAll(async () => {
  const tableName = uniqueName('offline');
  await createTable(dynamoClient(), ledgerTableDefinition(tableName));
  ledger = createLedger({ client: documentClient(), tableName, now: () => now });
});

interface Case {
  readonly ids: string[];
  readonly input: Record<string, unknown>;
  readonly budget: { modelCalls: number; estimatedCostPerCall: number };
}

/** The worker Lambda's path (functions/worker.ts) on a test clock, then the seal the state machine makes at the deadline. */
const throughTheLedger = async ({ ids, input, budget }: Case) => {
  const runId = uniqueName('run');
  const clock = createTestClock(START);
  now = START;
  expectWait();
  const spec = { id: 'S', worker: 'probe', deadlineSeconds: DEADLINE_SECONDS, budget, input };
  await ledger.createRun({
    tenantId: TENANT,
    runId,
    request: { goal: 'compare', universe: { dimension: 'ids', ids }, subtasks: [{ ...spec, scope: { ids } }], budget: { modelCalls: 40, costLimit: 1000 } },
  });
  await ledger.appendRound({
    tenantId: TENANT,
    runId,
    round: 1,
    dispatchedAt: new Date(START).toISOString(),
    subtasks: [{ ...spec, round: 1, assigned: { ids } }],
  });
  const claim = await ledger.claimSubtask({ tenantId: TENANT, runId, subtaskId: 'S', workerId: 'offline', leaseMs: 120_000 });
  const pending = runSubtask({
    subtask: claim.subtask,
    registry,
    models,
    budget: { reserve: () => ledger.reserveBudget(claim) },
    now: clock.now,
    setTimer: clock.setTimer,
  });
  if (input.waitForDeadline) {
    await waiting.reached;
    clock.advance(DEADLINE_SECONDS * 1000);
  }
  const outcome = await pending;
  now = clock.now();
  if (outcome.state === 'timed_out') await ledger.sealTimedOut({ tenantId: TENANT, runId, subtaskId: 'S' });
  else await ledger.recordOutcome(claim, outcome);
  const item = await ledger.getSubtask({ tenantId: TENANT, runId, subtaskId: 'S' });
  return item && toOutcome(item);
};

const offline = async ({ ids, input, budget }: Case) => {
  const clock = createTestClock(START);
  expectWait();
  const options: RunOfflineOptions = {
    registry,
    worker: 'probe',
    subtaskId: 'S',
    assigned: { ids },
    input,
    budget,
    deadlineInMs: DEADLINE_SECONDS * 1000,
    clock,
  };
  const pending = runOffline(options);
  if (input.waitForDeadline) {
    await waiting.reached;
    clock.advance(DEADLINE_SECONDS * 1000);
  }
  return (await pending).outcome;
};

describe('runOffline records what the ledger records', () => {
  it.each<[string, Case]>([
    ['ok, with model calls charged', { ids: ['a', 'b'], input: { calls: 2 }, budget: { modelCalls: 3, estimatedCostPerCall: 7 } }],
    ['empty: the source answered with nothing', { ids: ['empty'], input: {}, budget: { modelCalls: 1, estimatedCostPerCall: 1 } }],
    ['invalid: the allowance ran out', { ids: ['a'], input: { calls: 4 }, budget: { modelCalls: 3, estimatedCostPerCall: 7 } }],
    ['invalid: findings over the ledger bound', { ids: ['a'], input: { blob: 70_000 }, budget: { modelCalls: 1, estimatedCostPerCall: 1 } }],
    ['timed_out: sealed at the deadline', { ids: ['a'], input: { calls: 1, waitForDeadline: true }, budget: { modelCalls: 2, estimatedCostPerCall: 5 } }],
  ])('%s', async (_, testCase) => {
    const recorded = await throughTheLedger(testCase);
    expect(recorded).toBeDefined();
    expect(await offline(testCase)).toEqual(recorded);
  });
});
