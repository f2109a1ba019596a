/**
 * Shared setup of the ledger's integration tests: a fresh table per file in the DynamoDB Local
 * started by the global setup, a clock the test moves by hand, and authored request fixtures.
 */
import { UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DispatchedSubtask, RunRequestInput } from '../../lib/contract';
import { createLedger, LEDGER_TABLE, ledgerTableDefinition, type DailyAllowance, type Ledger } from '../../lib/ledger';
import { createTable, documentClient, dynamoClient, uniqueName } from '../support/aws';
import { tagLedger, wireRecorder } from '../support/wire-calls';

/** Creates this file's own ledger table (keys and TTL as `LEDGER_TABLE` declares them). */
export const createLedgerTable = async (prefix: string): Promise<string> => {
  const tableName = uniqueName(prefix);
  const client = dynamoClient();
  await createTable(client, ledgerTableDefinition(tableName));
  await client.send(
    new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: LEDGER_TABLE.timeToLiveAttribute, Enabled: true } }),
  );
  return tableName;
};

/**
 * A clock the test advances explicitly, so leases and deadlines expire without sleeping.
 *
 * Tests start it in 2040: the tables have TTL enabled, as in AWS, and DynamoDB Local's TTL
 * sweeper deletes by the wall clock, so records stamped by a clock in the past (idempotency
 * keys, tenant days) would vanish mid-test.
 */
export interface TestClock {
  now(): number;
  advance(ms: number): void;
  set(instant: string): void;
}

export const testClock = (start: string): TestClock => {
  let current = Date.parse(start);
  return {
    now: () => current,
    advance: (ms) => {
      current += ms;
    },
    set: (instant) => {
      current = Date.parse(instant);
    },
  };
};

export interface LedgerSetup {
  readonly tableName: string;
  readonly clock: TestClock;
  readonly dailyAllowance?: DailyAllowance;
  readonly client?: DynamoDBDocumentClient;
  /**
   * Write shards of every run this ledger creates (docs/ledger.md, "Write-sharded runs"): the
   * ledger is built with one planned subtask per shard and each `createRun` plans `shards`
   * subtasks unless it says otherwise. Default: {@link TEST_SHARDS}.
   */
  readonly shards?: number;
}

/**
 * The shard count ledger test files run with: `LEDGER_TEST_SHARDS=4 npx vitest run test/ledger`
 * runs every ledger test against runs spread over four partitions. Default 1 (today's layout).
 */
export const TEST_SHARDS = Number(process.env.LEDGER_TEST_SHARDS ?? 1);

/** Where every test clock starts. */
export const T0 = '2040-06-01T12:00:00.000Z';

/** A test file's table, clock and ledger: the table is created once, the clock reset to {@link T0} before each test. */
export interface LedgerTestTable {
  readonly clock: TestClock;
  readonly tableName: string;
  readonly ledger: Ledger;
}

export const ledgerTestTable = (prefix: string, options: { dailyAllowance?: DailyAllowance; shards?: number } = {}): LedgerTestTable => {
  const clock = testClock(T0);
  const state = { tableName: '', ledger: undefined as Ledger | undefined };
  // The calls each ledger method sends, for test/iam: what a function may do is the union of
  // what the methods it calls send, on every path this suite reaches.
  const recorder = wireRecorder();
  beforeAll(async () => {
    state.tableName = await createLedgerTable(prefix);
    state.ledger = tagLedger(ledgerFor({ tableName: state.tableName, clock, client: recorder.attach(documentClient()), ...options }));
  });
  afterAll(() => recorder.flush(`ledger-${prefix}`));
  beforeEach(() => clock.set(T0));
  return {
    clock,
    get tableName() {
      return state.tableName;
    },
    get ledger() {
      if (state.ledger === undefined) throw new Error('the ledger is created in beforeAll');
      return state.ledger;
    },
  };
};

export const ledgerFor = (setup: LedgerSetup): Ledger => {
  const shards = setup.shards ?? TEST_SHARDS;
  const ledger = createLedger({
    client: setup.client ?? documentClient(),
    tableName: setup.tableName,
    now: setup.clock.now,
    ...(setup.dailyAllowance === undefined ? {} : { dailyAllowance: setup.dailyAllowance }),
    ...(shards > 1 ? { subtasksPerShard: 1 } : {}),
  });
  if (shards <= 1) return ledger;
  return { ...ledger, createRun: (input) => ledger.createRun({ plannedSubtasks: shards, ...input }) };
};

/** The tax-year request of the tax example, quarters A–D, each 4 calls at 7 per call; run budget 40 calls / 500. */
const QUARTER_STARTS = ['2025-01-01', '2025-04-01', '2025-07-01', '2025-10-01', '2026-01-01'] as const;
const QUARTER_TERMS = { worker: 'tax-statements', questionIds: ['q1'], required: true, justification: 'the total needs every quarter', deadlineSeconds: 60 };

export const taxYearRequest = (overrides: Partial<RunRequestInput> = {}): RunRequestInput => ({
  goal: 'Total deductible household expenses for tax year 2025',
  universe: { dimension: 'time', from: '2025-01-01', toExclusive: '2026-01-01' },
  subtasks: ['A', 'B', 'C', 'D'].map((id, index) => ({
    ...QUARTER_TERMS,
    id,
    scope: { from: QUARTER_STARTS[index]!, toExclusive: QUARTER_STARTS[index + 1]! },
    budget: { modelCalls: 4, estimatedCostPerCall: 7 },
  })),
  budget: { modelCalls: 40, costLimit: 500 },
  ...overrides,
});

/** One dispatched subtask of round 1 with an absolute deadline. */
export const dispatched = (id: string, from: string, toExclusive: string, overrides: Partial<DispatchedSubtask> = {}): DispatchedSubtask => ({
  ...QUARTER_TERMS,
  id,
  round: 1,
  deadlineSeconds: undefined,
  assigned: { from, toExclusive },
  deadline: '2040-06-01T12:01:00.000Z',
  budget: { modelCalls: 4, estimatedCostPerCall: 7 },
  ...overrides,
});

/** An `ok` outcome with a time observation, as a worker SDK would report it. */
export const okOutcome = (subtaskId: string, minDate: string, maxDate: string, recordCount: number) => ({
  subtaskId,
  state: 'ok' as const,
  observed: { minDate, maxDate, recordCount },
  sources: [`stmt-${minDate.slice(0, 7)}`],
  sourcesReached: 1,
  findings: { totalDeductible: 3880 },
});

/** Starts a run, dispatches `subtasks` as round 1 and returns the ledger with the run id. */
export const startRun = async (ledger: Ledger, tenantId: string, subtasks: readonly DispatchedSubtask[], request: RunRequestInput = taxYearRequest()) => {
  const runId = uniqueName('run');
  await ledger.createRun({ tenantId, runId, request });
  await ledger.appendRound({ tenantId, runId, round: 1, subtasks: [...subtasks] });
  return runId;
};

/** Settles all promises and sorts them into values and errors. */
export const settle = async <T>(promises: readonly Promise<T>[]): Promise<{ values: T[]; errors: unknown[] }> => {
  const results = await Promise.allSettled(promises);
  return {
    values: results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : [])),
    errors: results.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : [])),
  };
};
