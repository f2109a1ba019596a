/**
 * DynamoDB operations and capacity of the run ledger, counted by an instrumented client.
 *
 * Part 1 walks one subtask through its whole life (dispatch, arm, waiter, claim, N reservations,
 * outcome, a seal attempt, the reconcile read) inside a one-subtask run, and prints per phase
 * the calls by type, the items they wrote, and the capacity units. Part 2 does the same for a
 * four-subtask run to show what is per run and what is per subtask. Part 3 times a reservation
 * (three-item transaction) against a plain conditional UpdateItem in the same process.
 *
 * Capacity is computed from the sizes of the items each call touched, by DynamoDB's documented
 * rules (see `instrument`), rather than taken from DynamoDB Local's `ConsumedCapacity`, whose
 * figures for transactions were inconsistent (2 WCU for some three-item transactions).
 *
 * Run alone: `npx tsx bench/ledger.bench.ts`; `npm run bench` runs it with the others.
 */
import { DynamoDBClient, CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { pathToFileURL } from 'node:url';
import type { DispatchedSubtask, RunRequestInput } from '../lib/contract';
import { createLedger, itemSize, ledgerTableDefinition, type Ledger } from '../lib/ledger';
import { startDynamoDbLocal } from '../lib/local/dynamodb-local';

const RESERVATIONS_PER_SUBTASK = 3;
const TIMING_SAMPLES = 40;

interface Sample {
  readonly phase: string;
  readonly command: string;
  readonly items: number;
  readonly wcu: number;
  readonly rcu: number;
  readonly refused: boolean;
}

/** Keys and items as the document client passes them: plain values (marshalling happens later, at serialize). */
type Key = Record<string, unknown>;
type Input = {
  TableName?: string;
  Key?: Key;
  Item?: Key;
  ConsistentRead?: boolean;
  TransactItems?: {
    Put?: { TableName?: string; Item: Key };
    Update?: { TableName?: string; Key: Key };
    Delete?: { TableName?: string; Key: Key };
    ConditionCheck?: { TableName?: string; Key: Key };
  }[];
};
type Output = { Item?: Key; Items?: Key[] };

const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'TransactWriteItemsCommand']);

const keyOf = (item: Key): Key => ({ pk: item.pk!, sk: item.sk! });

/** The items a write touches, as (table, key). */
const touched = (command: string, input: Input): { table: string; key: Key }[] => {
  if (command === 'PutItemCommand' && input.Item) return [{ table: input.TableName ?? '', key: keyOf(input.Item) }];
  if (input.Key) return [{ table: input.TableName ?? '', key: input.Key }];
  return (input.TransactItems ?? []).map((entry) => {
    if (entry.Put) return { table: entry.Put.TableName ?? '', key: keyOf(entry.Put.Item) };
    const target = entry.Update ?? entry.Delete ?? entry.ConditionCheck;
    return { table: target?.TableName ?? '', key: target?.Key ?? {} };
  });
};

const sizeOf = (item: Key | undefined): number => (item === undefined ? 0 : itemSize(item));
const writeUnits = (bytes: number): number => Math.max(1, Math.ceil(bytes / 1024));
const readUnits = (bytes: number, consistent: boolean): number => Math.max(1, Math.ceil(bytes / 4096)) * (consistent ? 1 : 0.5);

/**
 * Counts every command sent through `client`, by phase. Capacity follows DynamoDB's documented
 * rules, computed from item sizes read before and after each write on a separate, uncounted
 * client: a write costs 1 WCU per started KB of the larger of the item before and after (a
 * refused conditional write costs the same for the item as it was); a transactional item costs
 * twice that, and a ConditionCheck is counted like a transactional item (conservative); a read
 * costs 1 RCU per started 4 KB (half for eventually consistent), a Query on the sum of its items.
 */
const instrument = (client: DynamoDBClient, side: DynamoDBDocumentClient) => {
  const samples: Sample[] = [];
  let phase = 'setup';
  const sizes = (targets: readonly { table: string; key: Key }[]) =>
    Promise.all(targets.map(async ({ table, key }) => sizeOf((await side.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item)));
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = context.commandName ?? 'unknown';
      const input = args.input as Input;
      const targets = WRITES.has(command) ? touched(command, input) : [];
      const before = await sizes(targets);
      const factor = command === 'TransactWriteItemsCommand' ? 2 : 1;
      const record = async (refused: boolean, output?: Output) => {
        const after = refused ? before : await sizes(targets);
        const wcu = before.reduce((sum, size, index) => sum + factor * writeUnits(Math.max(size, after[index] ?? 0)), 0);
        const readBytes = output?.Item ? sizeOf(output.Item) : (output?.Items ?? []).reduce((sum, item) => sum + sizeOf(item), 0);
        const rcu = WRITES.has(command) || output === undefined ? 0 : readUnits(readBytes, input.ConsistentRead === true);
        samples.push({ phase, command: command.replace(/Command$/, ''), items: input.TransactItems?.length ?? 1, wcu, rcu, refused });
      };
      try {
        const result = await next(args);
        await record(false, result.output as Output);
        return result;
      } catch (error) {
        await record(true);
        throw error;
      }
    },
    { step: 'initialize', name: 'ledgerBenchMeter' },
  );
  return {
    samples,
    phase: async <T>(name: string, work: () => Promise<T>): Promise<T> => {
      phase = name;
      try {
        return await work();
      } finally {
        phase = 'between';
      }
    },
  };
};

type Meter = ReturnType<typeof instrument>;

const request = (subtaskIds: readonly string[]): RunRequestInput => ({
  goal: 'Total deductible household expenses for tax year 2025',
  universe: { dimension: 'time', from: '2025-01-01', toExclusive: '2026-01-01' },
  subtasks: subtaskIds.map((id, index) => ({
    id,
    worker: 'tax-statements',
    questionIds: ['q1'],
    scope: {
      from: `2025-${String(index * 3 + 1).padStart(2, '0')}-01`,
      toExclusive: index === 3 ? '2026-01-01' : `2025-${String(index * 3 + 4).padStart(2, '0')}-01`,
    },
    required: true,
    justification: 'the total needs every quarter',
    deadlineSeconds: 60,
    budget: { modelCalls: 4, estimatedCostPerCall: 7 },
  })),
  budget: { modelCalls: 40, costLimit: 500 },
});

const dispatched = (req: RunRequestInput): DispatchedSubtask[] =>
  (req.subtasks ?? []).map((spec) => ({
    id: spec.id,
    worker: spec.worker,
    round: 1,
    questionIds: spec.questionIds ?? [],
    required: spec.required ?? false,
    justification: spec.justification,
    assigned: spec.scope,
    deadlineSeconds: spec.deadlineSeconds,
    budget: spec.budget,
  }));

/** One subtask from dispatch to reconcile, each step in its own phase. */
const subtaskLife = async (ledger: Ledger, meter: Meter, clock: { advance(ms: number): void }, tenantId: string, runId: string, subtaskId: string) => {
  const ref = { tenantId, runId, subtaskId };
  await meter.phase('arm: read subtask', () => ledger.getSubtask(ref));
  await meter.phase('register waiter', () => ledger.registerWaiter({ ...ref, taskToken: `token-${subtaskId}` }));
  const claim = await meter.phase('claim', () => ledger.claimSubtask({ ...ref, workerId: `w-${subtaskId}`, leaseMs: 30_000 }));
  for (let call = 0; call < RESERVATIONS_PER_SUBTASK; call += 1)
    await meter.phase(`reserve budget ×${RESERVATIONS_PER_SUBTASK}`, () => ledger.reserveBudget(claim));
  await meter.phase('record outcome (+ token read)', () =>
    ledger.recordOutcome(claim, {
      subtaskId,
      state: 'ok',
      observed: { minDate: '2025-01-02', maxDate: '2025-03-31', recordCount: 180 },
      sources: ['stmt-2025-01', 'stmt-2025-02', 'stmt-2025-03'],
      sourcesReached: 3,
      findings: { totalDeductible: 3880 },
    }),
  );
  clock.advance(61_000);
  await meter.phase('seal attempt (already ended)', () => ledger.sealTimedOut(ref));
  clock.advance(-61_000);
};

const runLife = async (ledger: Ledger, meter: Meter, clock: { advance(ms: number): void }, subtaskIds: readonly string[]) => {
  const tenantId = 'bench-tenant';
  const runId = `bench-${subtaskIds.length}-${Date.now()}`;
  const req = request(subtaskIds);
  await meter.phase('create run', () => ledger.createRun({ tenantId, runId, idempotencyKey: runId, request: req }));
  await meter.phase('dispatch round (appendRound)', () =>
    ledger.appendRound({ tenantId, runId, round: 1, subtasks: dispatched(req), dispatchedAt: '2040-06-01T12:00:00Z' }),
  );
  for (const id of subtaskIds) await subtaskLife(ledger, meter, clock, tenantId, runId, id);
  await meter.phase('reconcile read (readManifest)', () => ledger.readManifest(tenantId, runId));
  await meter.phase('finish run', () =>
    ledger.finishRun({
      tenantId,
      runId,
      status: 'succeeded',
      answer: {
        text: 'Deductible total: 3880.',
        result: {},
        coverage: {
          complete: true,
          missingQuestions: [],
          degradedReason: [],
          partitions: subtaskIds.length,
          overlaps: [],
          gaps: [],
          statement: 'Coverage: complete.',
        },
      },
    }),
  );
};

interface Row {
  phase: string;
  calls: string;
  items: number;
  wcu: number;
  rcu: number;
}

const summarise = (samples: readonly Sample[]): Row[] => {
  const phases = [...new Set(samples.map((s) => s.phase))];
  return phases.map((phase) => {
    const mine = samples.filter((s) => s.phase === phase);
    const byCommand = new Map<string, number>();
    for (const s of mine) {
      const label = `${s.command}${s.refused ? ' (refused)' : ''}`;
      byCommand.set(label, (byCommand.get(label) ?? 0) + 1);
    }
    return {
      phase,
      calls: [...byCommand].map(([command, count]) => `${count}× ${command}`).join(', '),
      items: mine.filter((s) => s.command === 'TransactWriteItems').reduce((sum, s) => sum + s.items, 0),
      wcu: mine.reduce((sum, s) => sum + s.wcu, 0),
      rcu: mine.reduce((sum, s) => sum + s.rcu, 0),
    };
  });
};

const printRows = (title: string, rows: readonly Row[]): void => {
  console.log(`\n${title}`);
  const width = Math.max(...rows.map((r) => r.phase.length), 5);
  console.log(`  ${'phase'.padEnd(width)}  ${'WCU'.padStart(5)}  ${'RCU'.padStart(5)}  tx items  calls`);
  for (const row of rows) {
    console.log(`  ${row.phase.padEnd(width)}  ${String(row.wcu).padStart(5)}  ${String(row.rcu).padStart(5)}  ${String(row.items).padStart(8)}  ${row.calls}`);
  }
  const total = rows.reduce(
    (sum, r) => ({ wcu: sum.wcu + r.wcu, rcu: sum.rcu + r.rcu, calls: sum.calls + r.calls.split(', ').reduce((n, c) => n + Number(c.split('×')[0]), 0) }),
    { wcu: 0, rcu: 0, calls: 0 },
  );
  console.log(`  ${'total'.padEnd(width)}  ${String(total.wcu).padStart(5)}  ${String(total.rcu).padStart(5)}            ${total.calls} calls`);
};

const timeEach = async (count: number, work: (index: number) => Promise<unknown>): Promise<number> => {
  const start = performance.now();
  for (let index = 0; index < count; index += 1) await work(index);
  return (performance.now() - start) / count;
};

/** Reservation latency against a single-item conditional counter update, same emulator, same process. */
const timing = async (ledger: Ledger, document: DynamoDBDocumentClient, tableName: string): Promise<void> => {
  const tenantId = 'bench-timing';
  const runId = `timing-${Date.now()}`;
  const req = { ...request(['A']), budget: { modelCalls: 10_000, costLimit: 1_000_000 } };
  await ledger.createRun({ tenantId, runId, request: req });
  await ledger.appendRound({
    tenantId,
    runId,
    round: 1,
    subtasks: dispatched(req).map((s) => ({ ...s, budget: { modelCalls: 10_000, estimatedCostPerCall: 7 } })),
    dispatchedAt: '2040-06-01T12:00:00Z',
  });
  const claim = await ledger.claimSubtask({ tenantId, runId, subtaskId: 'A', workerId: 'w', leaseMs: 30_000 });
  await document.send(new PutCommand({ TableName: tableName, Item: { pk: 'baseline', sk: 'counter', left: 1_000_000 } }));
  const baseline = () =>
    document.send(
      new UpdateCommand({
        TableName: tableName,
        Key: { pk: 'baseline', sk: 'counter' },
        UpdateExpression: 'SET #left = #left - :one',
        ConditionExpression: '#left >= :one',
        ExpressionAttributeNames: { '#left': 'left' },
        ExpressionAttributeValues: { ':one': 1 },
      }),
    );
  await timeEach(10, baseline);
  await timeEach(10, () => ledger.reserveBudget(claim));
  const baselineMs = await timeEach(TIMING_SAMPLES, baseline);
  const reserveMs = await timeEach(TIMING_SAMPLES, () => ledger.reserveBudget(claim));
  console.log(`\nLatency on DynamoDB Local (${TIMING_SAMPLES} sequential calls each, after 10 warm-up calls)`);
  console.log(`  baseline: conditional UpdateItem on one counter   ${baselineMs.toFixed(1)} ms/call`);
  console.log(`  reserveBudget: 2-item conditional transaction     ${reserveMs.toFixed(1)} ms/call  (${(reserveMs / baselineMs).toFixed(2)}× the baseline)`);
};

/** Prints the ledger's DynamoDB operations and capacity for one subtask's life and for a run. */
export async function run(): Promise<void> {
  const local = await startDynamoDbLocal();
  try {
    const connect = () =>
      new DynamoDBClient({ endpoint: local.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const base = connect();
    const tableName = 'tessera-ledger-bench';
    await base.send(new CreateTableCommand(ledgerTableDefinition(tableName)));
    const meter = instrument(base, DynamoDBDocumentClient.from(connect()));
    const document = DynamoDBDocumentClient.from(base, { marshallOptions: { removeUndefinedValues: true } });
    let now = Date.parse('2040-06-01T12:00:00Z');
    const clock = { advance: (ms: number) => void (now += ms) };
    const ledger = createLedger({ client: document, tableName, now: () => now, dailyAllowance: { modelCalls: 1_000_000, costLimit: 100_000_000 } });

    console.log('# Run ledger: DynamoDB operations and capacity units (counted on DynamoDB Local)');
    const before = meter.samples.length;
    await runLife(ledger, meter, clock, ['A']);
    printRows(`One subtask's life in a one-subtask run (${RESERVATIONS_PER_SUBTASK} reservations)`, summarise(meter.samples.slice(before)));

    const middle = meter.samples.length;
    await runLife(ledger, meter, clock, ['A', 'B', 'C', 'D']);
    const four = meter.samples.slice(middle);
    printRows(`A four-subtask run (${RESERVATIONS_PER_SUBTASK} reservations each), all subtasks together`, summarise(four));
    const perSubtask = four.filter((s) => !['create run', 'dispatch round (appendRound)', 'reconcile read (readManifest)', 'finish run'].includes(s.phase));
    const runLevel = four.filter((s) => !perSubtask.includes(s));
    const sum = (list: readonly Sample[], key: 'wcu' | 'rcu') => list.reduce((total, s) => total + s[key], 0);
    console.log(
      `\n  per subtask (average of 4): ${(perSubtask.length / 4).toFixed(1)} calls, ${(sum(perSubtask, 'wcu') / 4).toFixed(1)} WCU, ${(sum(perSubtask, 'rcu') / 4).toFixed(1)} RCU`,
    );
    console.log(`  per run (create, dispatch, reconcile read, finish): ${runLevel.length} calls, ${sum(runLevel, 'wcu')} WCU, ${sum(runLevel, 'rcu')} RCU`);
    console.log('  capacity from item sizes: 1 WCU/KB per write, 2 per transactional item (ConditionCheck included), 1 RCU/4 KB strongly consistent');

    // Timing uses a client without the meter, whose extra size reads would distort it.
    const plain = DynamoDBDocumentClient.from(connect(), { marshallOptions: { removeUndefinedValues: true } });
    await timing(createLedger({ client: plain, tableName, now: () => now }), plain, tableName);
  } finally {
    await local.stop();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await run();
}
