/**
 * AWS calls per subtask, and what the orchestration costs per 1,000 subtasks, counted on the local
 * cloud for a 20-subtask run of no-op workers (`chaos`, `fault: 'none'`).
 *
 * DynamoDB Local and fauxqs each sit behind a counting proxy (`lib/local/request-counter.ts`), so
 * every call the handlers, the event-source-mapping pollers and the harness make is seen on the
 * wire, as AWS would bill it. Lambda invocations come from the local Lambda endpoint, state
 * transitions from the execution's event log. A warm-up run takes the handlers' cold starts and
 * first connections; the second run is the one measured. Capacity units are estimated from item sizes (DynamoDB Local does
 * not bill), and the cost per 1,000 subtasks uses published us-east-1 prices.
 *
 * The baseline, computed in the same process from the same measurement: the poll-loop alternative
 * of docs/deadlines.md, which replaces each subtask's callback wait with Wait → Arm checks.
 *
 * Run alone: `npx tsx bench/pipeline.bench.ts`; `npm run bench -- pipeline` runs it through the index.
 */
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { createTesseraClient, type TesseraClient } from '../lib/client';
import type { RunRequestInput } from '../lib/contract';
import type { AslStateMachine } from '../lib/infra/asl';
import { callbackSubtaskCost, pollSubtaskCost, PRICES, subtaskIteration, type PathCost } from '../lib/infra/deadline-figures';
import { STATE_NAMES } from '../lib/infra/run-state-machine';
import { functionHandlers, stateMachineDefinition } from '../lib/infra/synthesized';
import { CfnTemplate } from '../lib/template/reader';
import { PACKAGE_ROOT } from '../lib/infra/handler-metadata';
import { exampleWorkerModule } from '../examples/app/cdk';
import { registry as faultRegistry } from '../examples/app/fault-workers';
import { itemSize } from '../lib/ledger';
import { startLocalCloud, type LocalCloud } from '../lib/local/cloud';
import { startDynamoDbLocal } from '../lib/local/dynamodb-local';
import { startRequestCounter, type Exchange, type OperationCount, type RequestCounter } from '../lib/local/request-counter';
import { stateTransitions } from '../lib/local/sfn-executions';
import { startSqsLocal } from '../lib/local/sqs-local';
import { LOCAL_AUTH } from '../lib/local/local-auth';
import { synthesizeLocalTemplate } from '../lib/local/local-template';

const SUBTASKS = 20;
const TENANT = 'bench';
/** After the execution ends: the last DeleteMessageBatch calls and poller round trips land. */
const SETTLE_MS = 2_000;
const PER_1000 = 1_000 / SUBTASKS;

/** The functions of the template, named after their handler module (`functions/<role>.ts`). */
const ROLES = ['api', 'dispatch', 'deadline', 'worker', 'reconcile'] as const;
type Role = (typeof ROLES)[number];

/**
 * Billed milliseconds assumed per warm invocation on AWS. Local durations say nothing about AWS:
 * every handler shares one Node process with the emulators, and DynamoDB Local serialises
 * transactions at 25–40 ms each. In-region DynamoDB, SQS and Step Functions calls take about
 * 5–15 ms, so each figure is the handler's sequential AWS calls at ~10 ms plus its own work.
 */
const ASSUMED_MS: Record<Role, { ms: number; why: string }> = {
  api: { ms: 100, why: 'plan and validate, one createRun transaction, StartExecution' },
  dispatch: { ms: 300, why: 'manifest transaction and commit, 20 SendMessage calls' },
  deadline: { ms: 50, why: 'one ledger call (Arm read or waiter registration); as docs/deadlines.md' },
  worker: { ms: 250, why: 'per batch of up to 5 messages: claim, outcome transaction, token read (+ SendTaskSuccess) each' },
  reconcile: { ms: 300, why: 'manifest Query, reconcile and statement, finishRun' },
};

const ids = Array.from({ length: SUBTASKS }, (_, index) => `item-${String(index + 1).padStart(2, '0')}`);

const runRequest = (label: string): RunRequestInput => ({
  goal: `Pipeline benchmark (${label}): ${SUBTASKS} no-op subtasks`,
  universe: { dimension: 'ids', ids },
  subtasks: ids.map((id, index) => ({
    id: `S${index + 1}`,
    worker: 'chaos',
    scope: { ids: [id] },
    input: { fault: 'none' },
    deadlineSeconds: 30,
    budget: { modelCalls: 1, estimatedCostPerCall: 0 },
  })),
  policy: { retry: { timed_out: 0, invalid: 0, empty: 0 }, maxRounds: 1 },
  budget: { modelCalls: SUBTASKS, costLimit: 1 },
});

// ---------------------------------------------------------------------------------------------
// The stack: emulators behind counters, and the local cloud wired to the counters.

interface Stack {
  readonly cloud: LocalCloud;
  readonly template: unknown;
  readonly dynamodb: RequestCounter;
  readonly sqs: RequestCounter;
  /** DynamoDB Local itself, for reads the benchmark makes without counting them. */
  readonly dynamodbDirect: string;
  readonly stop: () => Promise<void>;
}

const startStack = async (): Promise<Stack> => {
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const step of stops.reverse()) await step();
  };
  try {
    const [ddb, sqsLocal] = await Promise.all([startDynamoDbLocal(), startSqsLocal()]);
    stops.push(() => ddb.stop(), () => sqsLocal.stop());
    // The SQS counter forwards Host unchanged, so fauxqs names the queues after the counter's port
    // (`sqs.<region>.localhost:<counter port>`), which is the origin the cloud derives from this endpoint.
    const [dynamodb, sqs] = await Promise.all([startRequestCounter({ target: ddb.endpoint, keepBodies: true }), startRequestCounter({ target: sqsLocal.endpoint })]);
    stops.push(() => dynamodb.stop(), () => sqs.stop());
    // The benchmark's no-op workers are the fault-injection kind `chaos` with fault 'none'.
    const template = synthesizeLocalTemplate(exampleWorkerModule({ faultInjection: true }));
    const cloud = await startLocalCloud({
      template,
      repoRoot: PACKAGE_ROOT,
      registry: faultRegistry,
      emulators: { dynamodbEndpoint: dynamodb.endpoint, sqsEndpoint: sqs.endpoint },
      jwt: { issuer: LOCAL_AUTH.issuer, audience: [LOCAL_AUTH.audience], tenantClaim: LOCAL_AUTH.tenantClaim },
      functionEnvironment: { POWERTOOLS_LOG_LEVEL: 'ERROR' },
    });
    stops.push(() => cloud.stop());
    return { cloud, template, dynamodb, sqs, dynamodbDirect: ddb.endpoint, stop };
  } catch (error) {
    await stop();
    throw error;
  }
};

// ---------------------------------------------------------------------------------------------
// One measured run.

interface Measurement {
  readonly runId: string;
  readonly seconds: number;
  readonly transitions: number;
  readonly invocations: Record<Role, number>;
  readonly dynamodb: readonly Exchange[];
  readonly sqs: Record<string, OperationCount>;
  /** The execution's event log. */
  readonly events: readonly unknown[];
}

const roleOf = (handler: string): Role => {
  const role = ROLES.find((candidate) => handler === `functions/${candidate}.ts`);
  if (!role) throw new Error(`function handler ${handler} is not one of ${ROLES.join(', ')}`);
  return role;
};

/** Lambda invocations by role since `before`, through the template's `tessera:handler` metadata. */
const invocationsSince = (stack: Stack, before: Readonly<Record<string, { invocations: number }>>): Record<Role, number> => {
  const handlers = functionHandlers(stack.template);
  const after = stack.cloud.lambdaStats();
  const byRole = Object.fromEntries(ROLES.map((role) => [role, 0])) as Record<Role, number>;
  for (const fn of stack.cloud.resources.functions) {
    const handler = handlers[fn.logicalId];
    if (handler === undefined) continue;
    byRole[roleOf(handler)] += (after[fn.name]?.invocations ?? 0) - (before[fn.name]?.invocations ?? 0);
  }
  return byRole;
};

const measureRun = async (stack: Stack, client: TesseraClient, label: string): Promise<Measurement> => {
  const lambdaBefore = stack.cloud.lambdaStats();
  stack.dynamodb.reset();
  stack.sqs.reset();
  const started = performance.now();
  const { runId } = await client.createRun(runRequest(label));
  const execution = stack.cloud.executions.executions().find((record) => record.name === runId);
  if (!execution) throw new Error(`run ${runId} started no execution`);
  // Waiting on the execution rather than polling GET /runs keeps the caller's reads out of the counts.
  const ended = await stack.cloud.executions.settled(execution.executionArn);
  const seconds = (performance.now() - started) / 1000;
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const measurement: Measurement = {
    runId,
    seconds,
    transitions: stateTransitions(ended),
    invocations: invocationsSince(stack, lambdaBefore),
    dynamodb: stack.dynamodb.exchanges(),
    sqs: stack.sqs.counts(),
    events: ended.events,
  };
  const run = await client.getRun(runId);
  const ok = run.subtasks.filter((subtask) => subtask.state === 'ok').length;
  if (ended.status !== 'SUCCEEDED' || run.status !== 'succeeded' || ok !== SUBTASKS) {
    throw new Error(`${label} run ${runId} ended ${ended.status}/${run.status} with ${ok} of ${SUBTASKS} subtasks ok; the figures would not describe a normal run`);
  }
  return measurement;
};

// ---------------------------------------------------------------------------------------------
// DynamoDB capacity, estimated from item sizes.

const AttributeMap = z.record(z.string(), z.unknown());
const Keyed = z.looseObject({ TableName: z.string().optional(), Key: AttributeMap });
const TransactEntry = z.looseObject({
  Put: z.looseObject({ TableName: z.string().optional(), Item: AttributeMap }).optional(),
  Update: Keyed.optional(),
  Delete: Keyed.optional(),
  ConditionCheck: Keyed.optional(),
  Get: Keyed.optional(),
});
const DynamoRequest = z.looseObject({
  Key: AttributeMap.optional(),
  Item: AttributeMap.optional(),
  ConsistentRead: z.boolean().optional(),
  TransactItems: z.array(TransactEntry).optional(),
});
const DynamoResponse = z.looseObject({
  Item: AttributeMap.optional(),
  Items: z.array(AttributeMap).optional(),
  Responses: z.array(z.looseObject({ Item: AttributeMap.optional() })).optional(),
});

const parseBody = <T>(schema: z.ZodType<T>, body: Buffer | undefined): T => {
  const text = body?.toString('utf8') ?? '';
  return schema.parse(text === '' ? {} : JSON.parse(text));
};

type Sizes = ReadonlyMap<string, number>;

/** Marshalled (DynamoDB JSON) item or key → plain values, as `itemSize` measures them. */
const plain = (raw: Record<string, unknown>): Record<string, unknown> => unmarshall(raw as Parameters<typeof unmarshall>[0]);
const sizeOfRaw = (raw: Record<string, unknown> | undefined): number => (raw === undefined ? 0 : itemSize(plain(raw)));
const keyId = (raw: Record<string, unknown>): string => {
  const { pk, sk } = plain(raw);
  return `${String(pk)}\u0000${String(sk)}`;
};

/** Every item's size as it stands after the run, read straight from DynamoDB Local (uncounted). */
const finalSizes = async (stack: Stack): Promise<Sizes> => {
  const client = new DynamoDBClient({ endpoint: stack.dynamodbDirect, region: stack.cloud.region, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const sizes = new Map<string, number>();
  for (const { tableName } of stack.cloud.resources.tables) {
    let start: Record<string, unknown> | undefined;
    do {
      const page = await client.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: start as never }));
      for (const item of page.Items ?? []) sizes.set(keyId(item), sizeOfRaw(item));
      start = page.LastEvaluatedKey;
    } while (start);
  }
  client.destroy();
  return sizes;
};

const writeUnits = (bytes: number): number => Math.max(1, Math.ceil(bytes / 1024));
const readUnits = (bytes: number): number => Math.max(1, Math.ceil(bytes / 4096));

/**
 * Write units of one item: a Put is sized by the item it writes (the ledger only puts new items);
 * an Update, Delete or ConditionCheck by the item's size after the run, an upper bound of "the
 * larger of before and after" because ledger items only grow while a run is live.
 */
const entryWriteUnits = (entry: z.infer<typeof TransactEntry>, sizes: Sizes): number => {
  if (entry.Put) return writeUnits(sizeOfRaw(entry.Put.Item));
  const keyed = entry.Update ?? entry.Delete ?? entry.ConditionCheck;
  return keyed ? writeUnits(sizes.get(keyId(keyed.Key)) ?? 0) : 0;
};

interface Capacity {
  readonly writeUnits: number;
  readonly readUnits: number;
}

/** DynamoDB's rules: 1 WRU per KB written, 2 per transactional item; 1 RRU per 4 KB strongly consistent, half eventually, 2 per transactional read. */
const capacityOf = (exchange: Exchange, sizes: Sizes): Capacity => {
  const request = parseBody(DynamoRequest, exchange.requestBody);
  switch (exchange.operation) {
    case 'PutItem':
      return { writeUnits: writeUnits(sizeOfRaw(request.Item)), readUnits: 0 };
    case 'UpdateItem':
    case 'DeleteItem':
      return { writeUnits: writeUnits(request.Key ? (sizes.get(keyId(request.Key)) ?? 0) : 0), readUnits: 0 };
    case 'TransactWriteItems':
      return { writeUnits: (request.TransactItems ?? []).reduce((sum, entry) => sum + 2 * entryWriteUnits(entry, sizes), 0), readUnits: 0 };
    default:
      return { writeUnits: 0, readUnits: readCapacity(exchange, request.ConsistentRead === true) };
  }
};

const readCapacity = (exchange: Exchange, consistent: boolean): number => {
  if (exchange.status !== 200) return 0;
  const response = parseBody(DynamoResponse, exchange.responseBody);
  const factor = consistent ? 1 : 0.5;
  switch (exchange.operation) {
    case 'GetItem':
      return factor * readUnits(sizeOfRaw(response.Item));
    case 'Query':
    case 'Scan':
      return factor * readUnits((response.Items ?? []).reduce((sum, item) => sum + sizeOfRaw(item), 0));
    case 'TransactGetItems':
      return (response.Responses ?? []).reduce((sum, entry) => sum + 2 * readUnits(sizeOfRaw(entry.Item)), 0);
    default:
      return 0;
  }
};

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);
/** Operations `capacityOf` prices; any other (the ledger makes none today) shows `?` instead of a silent 0. */
const PRICED = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems', 'GetItem', 'Query', 'Scan', 'TransactGetItems']);

interface DynamoRow {
  readonly operation: string;
  readonly requests: number;
  readonly errors: number;
  readonly items: number;
  readonly consistent: number;
  readonly capacity: Capacity;
}

const dynamoRows = (exchanges: readonly Exchange[], sizes: Sizes): DynamoRow[] => {
  const rows = new Map<string, DynamoRow>();
  for (const exchange of exchanges) {
    const previous = rows.get(exchange.operation) ?? { operation: exchange.operation, requests: 0, errors: 0, items: 0, consistent: 0, capacity: { writeUnits: 0, readUnits: 0 } };
    const capacity = capacityOf(exchange, sizes);
    rows.set(exchange.operation, {
      operation: exchange.operation,
      requests: previous.requests + 1,
      errors: previous.errors + (exchange.status === 200 ? 0 : 1),
      items: previous.items + exchange.items,
      consistent: previous.consistent + (parseBody(DynamoRequest, exchange.requestBody).ConsistentRead === true ? 1 : 0),
      capacity: { writeUnits: previous.capacity.writeUnits + capacity.writeUnits, readUnits: previous.capacity.readUnits + capacity.readUnits },
    });
  }
  return [...rows.values()].sort((a, b) => Number(WRITES.has(b.operation)) - Number(WRITES.has(a.operation)) || b.requests - a.requests);
};

// ---------------------------------------------------------------------------------------------
// SQS: billed requests, and the empty polls an idle mapping makes on its own schedule.

interface SqsSplit {
  readonly billed: readonly { operation: string; requests: number; items: number }[];
  readonly emptyPolls: number;
}

const splitSqs = (counts: Record<string, OperationCount>): SqsSplit => {
  const billed = Object.entries(counts).map(([operation, count]) =>
    operation === 'ReceiveMessage' ? { operation: 'ReceiveMessage (deliveries)', requests: count.nonEmpty ?? 0, items: count.items } : { operation, requests: count.requests, items: count.items },
  );
  const receive = counts.ReceiveMessage;
  return { billed: billed.sort((a, b) => b.requests - a.requests), emptyPolls: receive ? receive.requests - (receive.nonEmpty ?? 0) : 0 };
};

// ---------------------------------------------------------------------------------------------
// The cost model.

const MemorySize = z.number().optional();

/** MemorySize (MB) of each role's function, from the template (Lambda's default is 128 MB). */
const memoryByRole = (template: unknown): Record<Role, number> => {
  const { Resources } = CfnTemplate.parse(template);
  const memory = Object.fromEntries(ROLES.map((role) => [role, 128])) as Record<Role, number>;
  for (const [logicalId, handler] of Object.entries(functionHandlers(template))) {
    memory[roleOf(handler)] = MemorySize.parse(Resources[logicalId]?.Properties?.MemorySize) ?? 128;
  }
  return memory;
};

/** What one run consumed, in billable units. */
interface Usage {
  readonly transitions: number;
  readonly invocations: Record<Role, number>;
  readonly sqsRequests: number;
  readonly capacity: Capacity;
}

/** USD per run of 20 subtasks, by service. */
interface RunCost {
  readonly stepFunctions: number;
  readonly lambda: number;
  readonly sqs: number;
  readonly dynamodb: number;
}

const total = (cost: RunCost): number => cost.stepFunctions + cost.lambda + cost.sqs + cost.dynamodb;

const invocationGbSeconds = (role: Role, memory: Record<Role, number>): number => (memory[role] / 1024) * (ASSUMED_MS[role].ms / 1000);

const costOf = (usage: Usage, memory: Record<Role, number>): RunCost => ({
  stepFunctions: usage.transitions * PRICES.stateTransition.usd,
  lambda: ROLES.reduce((sum, role) => sum + usage.invocations[role] * (PRICES.lambdaRequest.usd + invocationGbSeconds(role, memory) * PRICES.lambdaGbSecond.usd), 0),
  sqs: usage.sqsRequests * PRICES.sqsRequest.usd,
  dynamodb: usage.capacity.writeUnits * PRICES.writeUnit.usd + usage.capacity.readUnits * PRICES.readUnit.usd,
});

/**
 * What one subtask's Map iteration costs beyond the rest of the run: its states, its
 * deadline-function calls, each Arm's strongly consistent read of the subtask item and each
 * Await's waiter registration (an UpdateItem of it), per docs/ledger.md.
 */
interface IterationUsage {
  readonly transitions: number;
  readonly deadlineInvocations: number;
  readonly readUnits: number;
  readonly writeUnits: number;
}

/** Capacity of one read and one write of a subtask item, from the largest subtask item of the run. */
interface SubtaskItemUnits {
  readonly read: number;
  readonly write: number;
}

const visits = (path: readonly string[], state: string): number => path.filter((name) => name === state).length;

const iterationUsage = (cost: PathCost, units: SubtaskItemUnits): IterationUsage => ({
  transitions: cost.transitions,
  deadlineInvocations: cost.lambdaInvocations,
  readUnits: visits(cost.path, STATE_NAMES.arm) * units.read,
  writeUnits: visits(cost.path, STATE_NAMES.await) * units.write,
});

/** The iterations of the measured run, from its event log: every state entered inside the Map. */
const measuredIterations = (entered: ReadonlyMap<string, number>, iterationStates: readonly string[], deadlineInvocations: number, units: SubtaskItemUnits): IterationUsage => ({
  transitions: iterationStates.reduce((sum, state) => sum + (entered.get(state) ?? 0), 0),
  deadlineInvocations,
  readUnits: (entered.get(STATE_NAMES.arm) ?? 0) * units.read,
  writeUnits: (entered.get(STATE_NAMES.await) ?? 0) * units.write,
});

const times = (usage: IterationUsage, count: number): IterationUsage => ({
  transitions: usage.transitions * count,
  deadlineInvocations: usage.deadlineInvocations * count,
  readUnits: usage.readUnits * count,
  writeUnits: usage.writeUnits * count,
});

/**
 * The measured run with some iterations' usage taken out and other iterations' put in: what the
 * run would have consumed with other Map paths. Everything outside the iterations (API,
 * Dispatch, SQS, the worker's own ledger calls, Reconcile) stays as measured.
 */
const withIterations = (usage: Usage, removed: IterationUsage, added: IterationUsage): Usage => ({
  transitions: usage.transitions - removed.transitions + added.transitions,
  invocations: { ...usage.invocations, deadline: usage.invocations.deadline - removed.deadlineInvocations + added.deadlineInvocations },
  sqsRequests: usage.sqsRequests,
  capacity: {
    writeUnits: usage.capacity.writeUnits - removed.writeUnits + added.writeUnits,
    readUnits: usage.capacity.readUnits - removed.readUnits + added.readUnits,
  },
});

const StateEntered = z.looseObject({ type: z.literal('StateEntered'), state: z.looseObject({ name: z.string() }) });

/** How many times each state was entered in an execution, Map iterations included. */
const enteredStates = (events: readonly unknown[]): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const event of events) {
    const parsed = StateEntered.safeParse(event);
    if (parsed.success) counts.set(parsed.data.state.name, (counts.get(parsed.data.state.name) ?? 0) + 1);
  }
  return counts;
};

/** Read and write units of the run's largest subtask item (the Arm read and the waiter registration touch it). */
const subtaskItemUnits = (sizes: Sizes, runId: string): SubtaskItemUnits => {
  const largest = Math.max(0, ...[...sizes].filter(([key]) => key.includes(runId) && key.includes('\u0000SUB#')).map(([, size]) => size));
  return { read: readUnits(largest), write: writeUnits(largest) };
};

// ---------------------------------------------------------------------------------------------
// Printing.

const fixed = (value: number, digits = 2): string => value.toFixed(digits);
const usd = (value: number): string => `$${value.toFixed(4)}`;

/** Prints an aligned table: figures right-aligned, the columns named in `text` left-aligned. */
const table = (header: readonly string[], rows: readonly (readonly string[])[], text: readonly number[] = [0]): void => {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const pad = (cell: string, column: number) => (text.includes(column) ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0));
  const line = (cells: readonly string[]) => `  ${cells.map(pad).join('  ')}`.trimEnd();
  console.log(line(header));
  for (const row of rows) console.log(line(row));
};

const totalCapacity = (rows: readonly DynamoRow[]): Capacity => ({
  writeUnits: rows.reduce((sum, row) => sum + row.capacity.writeUnits, 0),
  readUnits: rows.reduce((sum, row) => sum + row.capacity.readUnits, 0),
});

const callsOf = (rows: readonly DynamoRow[], writes: boolean): number =>
  rows.filter((row) => WRITES.has(row.operation) === writes).reduce((sum, row) => sum + row.requests, 0);

const printDynamo = (rows: readonly DynamoRow[]): void => {
  console.log('\nDynamoDB (calls by operation; capacity estimated from item sizes: DynamoDB Local does not bill)');
  table(
    ['operation', 'calls/run', 'calls/subtask', 'items/run', 'refused', 'consistent reads', 'WRU/subtask', 'RRU/subtask'],
    rows.map((row) => {
      const units = (value: number) => (PRICED.has(row.operation) ? fixed(value / SUBTASKS) : '?');
      return [row.operation, String(row.requests), fixed(row.requests / SUBTASKS), String(row.items), String(row.errors), WRITES.has(row.operation) ? '–' : String(row.consistent), units(row.capacity.writeUnits), units(row.capacity.readUnits)];
    }),
  );
  console.log('  items: entries of a transaction or batch, items a Query returned; refused: conditional writes DynamoDB turned down (billed all the same)');
  console.log('  capacity: 1 WRU per started KB written (a Put by its item; an Update or ConditionCheck by the item after the run, an upper bound),');
  console.log('  2 per transactional item (ConditionCheck included); 1 RRU per started 4 KB strongly consistent, 0.5 eventually consistent, 2 per TransactGet item');
};

const billedRequests = (split: SqsSplit): number => split.billed.reduce((sum, row) => sum + row.requests, 0);

const printSqs = (split: SqsSplit): void => {
  console.log('\nSQS (requests by operation)');
  table(
    ['operation', 'requests/run', 'requests/subtask', 'messages or entries/run'],
    split.billed.map((row) => [row.operation, String(row.requests), fixed(row.requests / SUBTASKS), String(row.items)]),
  );
  console.log(`  empty polls, excluded from the cost: ${split.emptyPolls} ReceiveMessage calls came back empty while the run was counted. They follow`);
  console.log('  the local pollers\' cadence (1-s long polls, 5 pollers per queue, one queue per worker kind); an AWS event-source mapping polls');
  console.log('  an idle queue on its own schedule whether runs happen or not: a standing cost of the deployment, not of a subtask.');
};

const printLambda = (invocations: Record<Role, number>, memory: Record<Role, number>): void => {
  console.log('\nLambda (invocations by function)');
  table(
    ['function', 'invocations/run', 'per subtask', 'memory MB', 'assumed ms', 'why that duration'],
    ROLES.map((role) => [role, String(invocations[role]), fixed(invocations[role] / SUBTASKS), String(memory[role]), String(ASSUMED_MS[role].ms), ASSUMED_MS[role].why]),
    [0, 5],
  );
  const count = ROLES.reduce((sum, role) => sum + invocations[role], 0);
  console.log(`  total: ${count} invocations per run = ${fixed(count / SUBTASKS)} per subtask`);
  console.log('  durations are assumed (warm, arm64): locally every handler shares one process with the emulators, so measured times say nothing about AWS');
};

const printTransitions = (transitions: number, asl: AslStateMachine, iteration: AslStateMachine, entered: ReadonlyMap<string, number>): void => {
  const inside = Object.keys(iteration.States);
  // In the order the execution first entered them.
  const perState = (states: readonly string[]) => [...entered].filter(([state]) => states.includes(state)).map(([state, count]) => `${state} ${count}`).join(', ');
  const iterations = inside.reduce((sum, state) => sum + (entered.get(state) ?? 0), 0);
  const waited = entered.get(STATE_NAMES.await) ?? 0;
  const callback = callbackSubtaskCost(iteration);
  console.log('\nStep Functions (Standard workflow: billed per state transition, i.e. per state entered)');
  console.log(`  ${transitions} per run = ${fixed(transitions / SUBTASKS)} per subtask`);
  console.log(`  outside the Map: ${transitions - iterations} (${perState(Object.keys(asl.States))})`);
  console.log(`  in the ${SUBTASKS} iterations: ${iterations} (${perState(inside)})`);
  console.log(`  ${SUBTASKS - waited} iterations found their no-op subtask already finished at Arm: Arm → IsSubtaskOpen → SubtaskDone (3);`);
  console.log(`  ${waited} waited for the worker: ${callback.path.join(' → ')} (${callback.transitions}).`);
};

const printPrices = (): void => {
  console.log('\nPrices used (us-east-1, published; excluded: API Gateway, CloudWatch Logs and metrics, X-Ray, data transfer, free tiers)');
  for (const price of Object.values(PRICES)) console.log(`  ${price.text}  [${price.source}]`);
};

const COST_HEADER = ['workload', 'design', 'Step Functions', 'Lambda', 'SQS', 'DynamoDB', 'total', 'vs callback'] as const;

const costRow = (workload: string, design: string, cost: RunCost, reference: RunCost): string[] => [
  workload,
  design,
  ...[cost.stepFunctions, cost.lambda, cost.sqs, cost.dynamodb, total(cost)].map((value) => usd(value * PER_1000)),
  `${fixed(total(cost) / total(reference))}×`,
];

interface Comparison {
  readonly usage: Usage;
  readonly memory: Record<Role, number>;
  readonly entered: ReadonlyMap<string, number>;
  readonly iteration: AslStateMachine;
  readonly units: SubtaskItemUnits;
}

const POLL_INTERVALS = [5, 1] as const;
const SUBTASK_SECONDS = [10, 60, 300] as const;

/**
 * The measured run, the poll loop on the same no-op work (only iterations that waited change), and
 * longer subtasks under either design, where every iteration waits.
 */
const comparisonRows = (c: Comparison): string[][] => {
  const callback = iterationUsage(callbackSubtaskCost(c.iteration), c.units);
  const measured = measuredIterations(c.entered, Object.keys(c.iteration.States), c.usage.invocations.deadline, c.units);
  const waited = c.entered.get(STATE_NAMES.await) ?? 0;
  const cost = (usage: Usage) => costOf(usage, c.memory);
  const base = cost(c.usage);
  const rows = [costRow(`no-op (measured; ${waited} of ${SUBTASKS} waited)`, 'callback', base, base)];
  for (const k of POLL_INTERVALS) {
    const poll = iterationUsage(pollSubtaskCost(c.iteration, 1, k), c.units);
    rows.push(costRow('', `poll ${k} s`, cost(withIterations(c.usage, times(callback, waited), times(poll, waited))), base));
  }
  for (const seconds of SUBTASK_SECONDS) {
    const reference = cost(withIterations(c.usage, measured, times(callback, SUBTASKS)));
    rows.push(costRow(`${seconds}-s subtasks`, 'callback', reference, reference));
    for (const k of POLL_INTERVALS) {
      const poll = iterationUsage(pollSubtaskCost(c.iteration, seconds, k), c.units);
      rows.push(costRow('', `poll ${k} s`, cost(withIterations(c.usage, measured, times(poll, SUBTASKS))), reference));
    }
  }
  return rows;
};

const printComparison = (c: Comparison): void => {
  console.log(`\nOrchestration cost per 1,000 subtasks (USD; ${PER_1000} runs like the measured one), and the poll-loop baseline`);
  table(COST_HEADER, comparisonRows(c), [0, 1]);
  console.log('  callback: the Map waits on a task token (what tessera builds); poll k s: Wait k s → Arm → IsSubtaskOpen until done (docs/deadlines.md).');
  console.log('  Longer subtasks: every iteration waits (Arm → IsSubtaskOpen → Await → SubtaskDone, or k-s checks), the rest as measured;');
  console.log('  the worker\'s own run time is the product\'s cost, not orchestration, so both designs keep the no-op worker\'s calls.');
};

const printSummary = (m: Measurement, rows: readonly DynamoRow[], sqs: SqsSplit): void => {
  const capacity = totalCapacity(rows);
  const consistent = rows.reduce((sum, entry) => sum + entry.consistent, 0);
  const invocations = ROLES.reduce((sum, role) => sum + m.invocations[role], 0);
  const row = (service: string, perRun: number, note: string) => [service, fixed(perRun / SUBTASKS), String(perRun), note];
  console.log(`\nAWS calls per subtask (the measured run ÷ ${SUBTASKS})`);
  table(
    ['service', 'per subtask', 'per run', 'note'],
    [
      row('DynamoDB writes', callsOf(rows, true), `${fixed(capacity.writeUnits / SUBTASKS)} WRU per subtask (estimated)`),
      row('DynamoDB reads', callsOf(rows, false), `${fixed(capacity.readUnits / SUBTASKS)} RRU per subtask (estimated); ${consistent} of ${callsOf(rows, false)} strongly consistent`),
      row('SQS requests', billedRequests(sqs), `besides ${sqs.emptyPolls} empty polls, excluded`),
      row('Lambda invocations', invocations, ROLES.map((role) => `${role} ${m.invocations[role]}`).join(', ')),
      row('State transitions', m.transitions, 'Standard workflow, from the execution\'s event log'),
    ],
    [0, 3],
  );
};

// ---------------------------------------------------------------------------------------------

/** Prints AWS calls per subtask and the orchestration cost per 1,000 subtasks, with the poll-loop baseline. */
export async function run(): Promise<void> {
  // Powertools reads these from the process (as startTesseraCloud sets them): no EMF lines or X-Ray segments.
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  process.env.POWERTOOLS_TRACE_ENABLED ??= 'false';
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const stack = await startStack();
  try {
    const token = await stack.cloud.mintToken({ tenant: TENANT, subject: 'pipeline-bench' });
    const client = createTesseraClient({ apiUrl: stack.cloud.apiUrl ?? '', token });
    const warmup = await measureRun(stack, client, 'warm-up');
    const m = await measureRun(stack, client, 'measured');
    const sizes = await finalSizes(stack);
    console.log(`# Pipeline: AWS calls per subtask and orchestration cost (${SUBTASKS} chaos subtasks, fault 'none', ids universe of ${SUBTASKS}, one round)`);
    console.log(`Two runs on the local cloud: a warm-up (${fixed(warmup.seconds, 1)} s: the handlers' cold starts, first connections) and the measured one (${fixed(m.seconds, 1)} s);`);
    console.log(`counted from POST /runs until the execution ended, plus ${SETTLE_MS / 1000} s; both succeeded with ${SUBTASKS} of ${SUBTASKS} subtasks ok.`);

    const rows = dynamoRows(m.dynamodb, sizes);
    const sqs = splitSqs(m.sqs);
    const memory = memoryByRole(stack.template);
    const asl = stateMachineDefinition(stack.template);
    const iteration = subtaskIteration(asl);
    const entered = enteredStates(m.events);
    printSummary(m, rows, sqs);
    printDynamo(rows);
    printSqs(sqs);
    printLambda(m.invocations, memory);
    printTransitions(m.transitions, asl, iteration, entered);
    printPrices();
    const usage: Usage = { transitions: m.transitions, invocations: m.invocations, sqsRequests: billedRequests(sqs), capacity: totalCapacity(rows) };
    printComparison({ usage, memory, entered, iteration, units: subtaskItemUnits(sizes, m.runId) });
  } finally {
    await stack.stop();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await run();
}
