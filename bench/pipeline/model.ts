/**
 * The pipeline benchmark's capacity and price model: DynamoDB capacity units estimated from item
 * sizes, SQS's billed requests, and the cost per 1,000 subtasks at the project's one price table
 * (`PRICES` in lib/infra/deadline-figures.ts). See bench/pipeline.bench.ts.
 */
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { z } from 'zod';
import { PRICES, type PathCost } from '../../lib/infra/deadline-figures';
import { STATE_NAMES } from '../../lib/infra/run-state-machine';
import { functionHandlers } from '../../lib/infra/synthesized';
import { CfnTemplate } from '../../lib/template/reader';
import { itemSize } from '../../lib/ledger';
import type { Exchange, OperationCount } from '../../lib/local/request-counter';
import { ROLES, type Role, type Stack, roleOf } from './setup';

/**
 * Billed milliseconds assumed per warm invocation on AWS. Local durations say nothing about AWS:
 * every handler shares one Node process with the emulators, and DynamoDB Local serialises
 * transactions at 25–40 ms each. In-region DynamoDB, SQS and Step Functions calls take about
 * 5–15 ms, so each figure is the handler's sequential AWS calls at ~10 ms plus its own work.
 */
export const ASSUMED_MS: Record<Role, { ms: number; why: string }> = {
  api: { ms: 100, why: 'plan and validate, one createRun transaction, StartExecution' },
  dispatch: { ms: 300, why: 'manifest transaction and commit, 20 SendMessage calls' },
  deadline: { ms: 50, why: 'one ledger call (Arm read or waiter registration); as docs/deadlines.md' },
  worker: { ms: 250, why: 'per batch of up to 5 messages: claim, outcome transaction, token read (+ SendTaskSuccess) each' },
  reconcile: { ms: 300, why: 'manifest Query, reconcile and statement, finishRun' },
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
export const finalSizes = async (stack: Stack): Promise<Sizes> => {
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

export interface Capacity {
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

export const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);
/** Operations `capacityOf` prices; any other (the ledger makes none today) shows `?` instead of a silent 0. */
export const PRICED = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems', 'GetItem', 'Query', 'Scan', 'TransactGetItems']);

export interface DynamoRow {
  readonly operation: string;
  readonly requests: number;
  readonly errors: number;
  readonly items: number;
  readonly consistent: number;
  readonly capacity: Capacity;
}

export const dynamoRows = (exchanges: readonly Exchange[], sizes: Sizes): DynamoRow[] => {
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

export interface SqsSplit {
  readonly billed: readonly { operation: string; requests: number; items: number }[];
  readonly emptyPolls: number;
}

export const splitSqs = (counts: Record<string, OperationCount>): SqsSplit => {
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
export const memoryByRole = (template: unknown): Record<Role, number> => {
  const { Resources } = CfnTemplate.parse(template);
  const memory = Object.fromEntries(ROLES.map((role) => [role, 128])) as Record<Role, number>;
  for (const [logicalId, handler] of Object.entries(functionHandlers(template))) {
    memory[roleOf(handler)] = MemorySize.parse(Resources[logicalId]?.Properties?.MemorySize) ?? 128;
  }
  return memory;
};

/** What one run consumed, in billable units. */
export interface Usage {
  readonly transitions: number;
  readonly invocations: Record<Role, number>;
  readonly sqsRequests: number;
  readonly capacity: Capacity;
}

/** USD per run of 20 subtasks, by service. */
export interface RunCost {
  readonly stepFunctions: number;
  readonly lambda: number;
  readonly sqs: number;
  readonly dynamodb: number;
}

export const total = (cost: RunCost): number => cost.stepFunctions + cost.lambda + cost.sqs + cost.dynamodb;

const invocationGbSeconds = (role: Role, memory: Record<Role, number>): number => (memory[role] / 1024) * (ASSUMED_MS[role].ms / 1000);

export const costOf = (usage: Usage, memory: Record<Role, number>): RunCost => ({
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
export interface SubtaskItemUnits {
  readonly read: number;
  readonly write: number;
}

const visits = (path: readonly string[], state: string): number => path.filter((name) => name === state).length;

export const iterationUsage = (cost: PathCost, units: SubtaskItemUnits): IterationUsage => ({
  transitions: cost.transitions,
  deadlineInvocations: cost.lambdaInvocations,
  readUnits: visits(cost.path, STATE_NAMES.arm) * units.read,
  writeUnits: visits(cost.path, STATE_NAMES.await) * units.write,
});

/** The iterations of the measured run, from its event log: every state entered inside the Map. */
export const measuredIterations = (entered: ReadonlyMap<string, number>, iterationStates: readonly string[], deadlineInvocations: number, units: SubtaskItemUnits): IterationUsage => ({
  transitions: iterationStates.reduce((sum, state) => sum + (entered.get(state) ?? 0), 0),
  deadlineInvocations,
  readUnits: (entered.get(STATE_NAMES.arm) ?? 0) * units.read,
  writeUnits: (entered.get(STATE_NAMES.await) ?? 0) * units.write,
});

export const times = (usage: IterationUsage, count: number): IterationUsage => ({
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
export const withIterations = (usage: Usage, removed: IterationUsage, added: IterationUsage): Usage => ({
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
export const enteredStates = (events: readonly unknown[]): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const event of events) {
    const parsed = StateEntered.safeParse(event);
    if (parsed.success) counts.set(parsed.data.state.name, (counts.get(parsed.data.state.name) ?? 0) + 1);
  }
  return counts;
};

/** Read and write units of the run's largest subtask item (the Arm read and the waiter registration touch it). */
export const subtaskItemUnits = (sizes: Sizes, runId: string): SubtaskItemUnits => {
  const largest = Math.max(0, ...[...sizes].filter(([key]) => key.includes(runId) && key.includes('\u0000SUB#')).map(([, size]) => size));
  return { read: readUnits(largest), write: writeUnits(largest) };
};
