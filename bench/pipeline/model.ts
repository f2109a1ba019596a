/**
 * The pipeline benchmark's capacity and price model: DynamoDB capacity units estimated from item
 * sizes, SQS's billed requests, and the cost per 1,000 subtasks at the project's one price table
 * (`PRICES` in bench/deadline-figures.ts). See bench/pipeline.bench.ts.
 */
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { z } from 'zod';
import { PRICES, type PathCost } from '../deadline-figures';
import { STATE_NAMES } from '../../lib/infra/run-state-machine';
import { functionHandlers } from '../../lib/infra/synthesized';
import { CfnTemplate } from '../../lib/template/reader';
import { itemSize } from '../../lib/ledger';
import type { Exchange, OperationCount } from '../request-counter';
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

export type Sizes = ReadonlyMap<string, number>;

/** Marshalled (DynamoDB JSON) item or key → plain values, as `itemSize` measures them. */
const plain = (raw: Record<string, unknown>): Record<string, unknown> => unmarshall(raw as Parameters<typeof unmarshall>[0]);
const sizeOfRaw = (raw: Record<string, unknown> | undefined): number => (raw === undefined ? 0 : itemSize(plain(raw)));
const keyId = (raw: Record<string, unknown>): string => {
  const { pk, sk } = plain(raw);
  return `${String(pk)}\u0000${String(sk)}`;
};

/** Every item's size as it stands after the run, read straight from DynamoDB Local (uncounted). */
export const finalSizes = async (stack: Stack): Promise<Sizes> => {
  const client = new DynamoDBClient({
    endpoint: stack.dynamodbDirect,
    region: stack.cloud.region,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
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

export interface Capacity {
  readonly writeUnits: number;
  readonly readUnits: number;
}

/** DynamoDB's read rules: 1 RRU per 4 KB strongly consistent, half eventually, 2 per transactional read. */
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
/** Operations the capacity model prices; any other (the ledger makes none today) shows `?` instead of a silent 0. */
export const PRICED = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems', 'GetItem', 'Query', 'Scan', 'TransactGetItems']);

export interface DynamoRow {
  readonly operation: string;
  readonly requests: number;
  readonly errors: number;
  readonly items: number;
  readonly consistent: number;
  readonly capacity: Capacity;
}

/** An item an Update, Delete or ConditionCheck touched, with its size as last seen before the call. */
interface KeyedWrite {
  readonly key: string;
  readonly kind: 'write' | 'check';
  /** The item's size as the latest Put, GetItem or Query before this call saw it; undefined if none did. */
  readonly before: number | undefined;
}

/**
 * One DynamoDB exchange without its bodies: what the capacity model needs from it, parsed at once
 * (at thousands of subtasks the bodies would fill the very process whose memory is measured).
 * `puts` are the write units of the items it put; `keyed` the items it updated, deleted or checked.
 */
export interface CompactExchange {
  readonly operation: string;
  readonly status: number;
  readonly items: number;
  readonly consistent: boolean;
  readonly puts: number;
  readonly keyed: readonly KeyedWrite[];
  readonly readUnits: number;
}

/** The attribute only the ledger's `writeCheckpoint` sets: an UpdateItem naming it is a checkpoint write. */
const CHECKPOINT_ATTRIBUTE = 'checkpointSequence';

/**
 * Checkpoint writes among the exchanges: UpdateItems whose expression names the subtask's
 * checkpoint sequence (one conditional UpdateItem of the subtask item per checkpoint). A worker
 * that reads one id finishes long before its first checkpoint is due, so the no-op run counts 0.
 *
 * @example
 * checkpointWrites(m.dynamodb) // 0 for 20 no-op chaos subtasks
 */
export const checkpointWrites = (exchanges: readonly Exchange[]): number =>
  exchanges.filter((exchange) => {
    if (exchange.operation !== 'UpdateItem' || exchange.requestBody === undefined) return false;
    const names = (JSON.parse(exchange.requestBody.toString('utf8')) as { ExpressionAttributeNames?: Record<string, string> }).ExpressionAttributeNames;
    return Object.values(names ?? {}).includes(CHECKPOINT_ATTRIBUTE);
  }).length;

/**
 * Turns exchanges, in the order they completed, into compact ones, keeping every item's latest
 * known size (from Puts, GetItem answers and Query answers) so that an Update or ConditionCheck is
 * sized as its item stood when it was called, not as it stands after the run: the run's `RUN` item,
 * checked by every outcome's transaction, only takes on its answer (kilobytes that grow with the
 * run) when the run finishes.
 */
export const createCompactor = () => {
  const known = new Map<string, number>();
  const see = (raw: Record<string, unknown> | undefined) => {
    if (raw !== undefined) known.set(keyId(raw), sizeOfRaw(raw));
  };
  const keyed = (raw: Record<string, unknown>, kind: KeyedWrite['kind']): KeyedWrite => {
    const key = keyId(raw);
    return { key, kind, before: known.get(key) };
  };
  return (exchange: Exchange): CompactExchange => {
    const request = parseBody(DynamoRequest, exchange.requestBody);
    const base = { operation: exchange.operation, status: exchange.status, items: exchange.items, consistent: request.ConsistentRead === true };
    switch (exchange.operation) {
      case 'PutItem':
        see(request.Item);
        return { ...base, puts: writeUnits(sizeOfRaw(request.Item)), keyed: [], readUnits: 0 };
      case 'UpdateItem':
      case 'DeleteItem':
        return { ...base, puts: 0, keyed: request.Key ? [keyed(request.Key, 'write')] : [], readUnits: 0 };
      case 'TransactWriteItems': {
        let puts = 0;
        const touched: KeyedWrite[] = [];
        for (const entry of request.TransactItems ?? []) {
          if (entry.Put) puts += 2 * writeUnits(sizeOfRaw(entry.Put.Item));
          else if (entry.ConditionCheck) touched.push(keyed(entry.ConditionCheck.Key, 'check'));
          else {
            const write = entry.Update ?? entry.Delete;
            if (write) touched.push(keyed(write.Key, 'write'));
          }
        }
        // Only a committed transaction changed its items.
        if (exchange.status === 200) for (const entry of request.TransactItems ?? []) see(entry.Put?.Item);
        return { ...base, puts, keyed: touched, readUnits: 0 };
      }
      default: {
        const readUnits = readCapacity(exchange, request.ConsistentRead === true);
        if (exchange.status === 200) {
          const response = parseBody(DynamoResponse, exchange.responseBody);
          see(response.Item);
          for (const item of response.Items ?? []) see(item);
        }
        return { ...base, puts: 0, keyed: [], readUnits };
      }
    }
  };
};

/**
 * Capacity of compact exchanges: an Update or Delete is billed by the larger of its item's size
 * before and after; the after-size is known for the last write of an item (its size after the
 * run), the before-size from the latest read or Put before it. A ConditionCheck reads the item as
 * it was. An item never seen before its first write falls back to its size after the run (an upper
 * bound). Transactional items count twice.
 */
const compactCapacity = (exchanges: readonly CompactExchange[], sizes: Sizes): Capacity[] => {
  const lastWrite = new Map<string, number>();
  exchanges.forEach((exchange, index) => {
    for (const entry of exchange.keyed) if (entry.kind === 'write') lastWrite.set(entry.key, index);
  });
  return exchanges.map((exchange, index) => {
    const factor = exchange.operation === 'TransactWriteItems' ? 2 : 1;
    const keyedUnits = exchange.keyed.reduce((sum, entry) => {
      const after = sizes.get(entry.key) ?? 0;
      const bytes =
        entry.before === undefined ? after : entry.kind === 'write' && lastWrite.get(entry.key) === index ? Math.max(entry.before, after) : entry.before;
      return sum + factor * writeUnits(bytes);
    }, 0);
    return { writeUnits: exchange.puts + keyedUnits, readUnits: exchange.readUnits };
  });
};

export const dynamoRows = (exchanges: readonly Exchange[], sizes: Sizes): DynamoRow[] => {
  const compact = createCompactor();
  return compactDynamoRows(exchanges.map(compact), sizes);
};

export const compactDynamoRows = (exchanges: readonly CompactExchange[], sizes: Sizes): DynamoRow[] => {
  const rows = new Map<string, DynamoRow>();
  const capacities = compactCapacity(exchanges, sizes);
  exchanges.forEach((exchange, index) => {
    const previous = rows.get(exchange.operation) ?? {
      operation: exchange.operation,
      requests: 0,
      errors: 0,
      items: 0,
      consistent: 0,
      capacity: { writeUnits: 0, readUnits: 0 },
    };
    const capacity = capacities[index] ?? { writeUnits: 0, readUnits: 0 };
    rows.set(exchange.operation, {
      operation: exchange.operation,
      requests: previous.requests + 1,
      errors: previous.errors + (exchange.status === 200 ? 0 : 1),
      items: previous.items + exchange.items,
      consistent: previous.consistent + (exchange.consistent ? 1 : 0),
      capacity: { writeUnits: previous.capacity.writeUnits + capacity.writeUnits, readUnits: previous.capacity.readUnits + capacity.readUnits },
    });
  });
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
    operation === 'ReceiveMessage'
      ? { operation: 'ReceiveMessage (deliveries)', requests: count.nonEmpty ?? 0, items: count.items }
      : { operation, requests: count.requests, items: count.items },
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
  lambda: ROLES.reduce(
    (sum, role) => sum + usage.invocations[role] * (PRICES.lambdaRequest.usd + invocationGbSeconds(role, memory) * PRICES.lambdaGbSecond.usd),
    0,
  ),
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
export const measuredIterations = (
  entered: ReadonlyMap<string, number>,
  iterationStates: readonly string[],
  deadlineInvocations: number,
  units: SubtaskItemUnits,
): IterationUsage => ({
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
