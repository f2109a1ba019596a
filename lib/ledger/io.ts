/**
 * The few DynamoDB calls the ledger makes, with its expression conventions in one place:
 * every attribute name is written `#name` (so reserved words such as `status` and `state` never
 * bite), and the names and values maps are derived from the expressions themselves, so an unused
 * or missing placeholder cannot slip through.
 */
import { randomUUID } from 'node:crypto';
import {
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactGetCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { LedgerErrorContext } from './errors';
import { retryConflicts, type ConflictRetry } from './failures';
import type { LedgerKey } from './keys';

/** A tenant's allowance per UTC day, across all of its runs. */
export interface DailyAllowance {
  readonly modelCalls: number;
  readonly costLimit: number;
}

/** What every ledger operation needs: the table, a clock and the retry policy. */
export interface LedgerContext {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** Epoch milliseconds. Tests pass a controllable clock. */
  readonly now: () => number;
  readonly dailyAllowance: DailyAllowance | undefined;
  readonly conflictRetry: ConflictRetry;
  /** Fresh unique ids (claim ids, transaction tokens). */
  readonly newId: () => string;
  /** Planned subtasks per shard of a new run (`SUBTASKS_PER_SHARD` when absent; tests lower it). */
  readonly subtasksPerShard?: number;
  /** Shard counts of runs this process has seen (they never change), by tenant and run. */
  readonly shardCache?: Map<string, number>;
}

/** The operation a request belongs to, named in errors such as `WriteConflict`. */
export interface Operation extends LedgerErrorContext {
  readonly operation: string;
}

/** Defaults for the optional parts of a context. */
export const contextDefaults = { now: (): number => Date.now(), newId: (): string => randomUUID() } as const;

/** @example iso(0) // '1970-01-01T00:00:00.000Z' */
export const iso = (epochMs: number): string => new Date(epochMs).toISOString();

/** The textual parts of one request's expressions. */
export interface ExpressionParts {
  readonly update?: string;
  readonly condition?: string;
  readonly projection?: string;
  readonly keyCondition?: string;
}

type Values = Readonly<Record<string, unknown>>;

const tokens = (text: string, sigil: '#' | ':'): Set<string> =>
  new Set(text.match(sigil === '#' ? /#[A-Za-z][A-Za-z0-9_]*/g : /:[A-Za-z][A-Za-z0-9_]*/g) ?? []);

/**
 * Builds the expression fields of a request. `#name` maps to the attribute `name`; only the
 * values an expression mentions are sent, and a mentioned value that is missing throws, because
 * that is a bug in the adapter rather than a condition to report.
 *
 * @example
 * expressions({ condition: '#state = :running' }, { ':running': 'running', ':unused': 1 })
 * // { ConditionExpression: '#state = :running', ExpressionAttributeNames: { '#state': 'state' },
 * //   ExpressionAttributeValues: { ':running': 'running' } }
 */
export const expressions = (parts: ExpressionParts, values: Values = {}) => {
  const text = [parts.update, parts.condition, parts.projection, parts.keyCondition].filter(Boolean).join(' ');
  const names = Object.fromEntries([...tokens(text, '#')].map((name) => [name, name.slice(1)]));
  const used = [...tokens(text, ':')];
  const missing = used.filter((name) => values[name] === undefined);
  if (missing.length > 0) throw new Error(`ledger expression uses ${missing.join(', ')} without a value: ${text}`);
  return {
    ...(parts.update === undefined ? {} : { UpdateExpression: parts.update }),
    ...(parts.condition === undefined ? {} : { ConditionExpression: parts.condition }),
    ...(parts.projection === undefined ? {} : { ProjectionExpression: parts.projection }),
    ...(parts.keyCondition === undefined ? {} : { KeyConditionExpression: parts.keyCondition }),
    ...(Object.keys(names).length === 0 ? {} : { ExpressionAttributeNames: names }),
    ...(used.length === 0 ? {} : { ExpressionAttributeValues: Object.fromEntries(used.map((name) => [name, values[name]])) }),
  };
};

/** Reads one item with a strongly consistent read. */
export const getItem = async (ctx: LedgerContext, key: LedgerKey): Promise<Record<string, unknown> | undefined> => {
  const output = await ctx.client.send(new GetCommand({ TableName: ctx.tableName, Key: key, ConsistentRead: true }));
  return output.Item;
};

/** Items one TransactGetItems reads at most. */
export const TRANSACT_GET_LIMIT = 100;

/**
 * Reads up to {@link TRANSACT_GET_LIMIT} items as one serializable snapshot (TransactGetItems):
 * no transaction's writes are seen half-applied across them. A read that collides with a
 * transaction in flight is retried. Missing items come back `undefined`, in key order.
 */
export const getItemsAtOnce = (ctx: LedgerContext, op: Operation, keys: readonly LedgerKey[]): Promise<(Record<string, unknown> | undefined)[]> =>
  retryConflicts(ctx.conflictRetry, op, async () => {
    const output = await ctx.client.send(new TransactGetCommand({ TransactItems: keys.map((key) => ({ Get: { TableName: ctx.tableName, Key: key } })) }));
    return keys.map((_, index) => output.Responses?.[index]?.Item);
  });

/**
 * Conditionally updates one item and returns the item as it is afterwards. A failed condition
 * throws with the old item attached (`ALL_OLD`), for the caller to explain. A write that collides
 * with a transaction in flight on the same item is retried.
 */
export const updateItem = (ctx: LedgerContext, op: Operation, key: LedgerKey, parts: ExpressionParts, values: Values): Promise<Record<string, unknown>> =>
  retryConflicts(ctx.conflictRetry, op, async () => {
    const output = await ctx.client.send(
      new UpdateCommand({
        TableName: ctx.tableName,
        Key: key,
        ...expressions(parts, values),
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return output.Attributes ?? {};
  });

/** Puts an item that must not exist yet. */
export const putNew = async (ctx: LedgerContext, item: Record<string, unknown>): Promise<void> => {
  await ctx.client.send(
    new PutCommand({
      TableName: ctx.tableName,
      Item: item,
      ...expressions({ condition: 'attribute_not_exists(#pk)' }),
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    }),
  );
};

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** One item of a transaction, in the ledger's expression conventions. */
export type LedgerTransactItem =
  | { readonly kind: 'put'; readonly item: Record<string, unknown>; readonly condition?: string; readonly values?: Values }
  | { readonly kind: 'update'; readonly key: LedgerKey; readonly update: string; readonly condition?: string; readonly values?: Values }
  | { readonly kind: 'check'; readonly key: LedgerKey; readonly condition: string; readonly values?: Values };

const transactItem = (tableName: string, entry: LedgerTransactItem): TransactItem => {
  const common = { TableName: tableName, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const };
  if (entry.kind === 'put') {
    return { Put: { ...common, Item: entry.item, ...expressions({ ...(entry.condition === undefined ? {} : { condition: entry.condition }) }, entry.values) } };
  }
  if (entry.kind === 'update') {
    const parts = { update: entry.update, ...(entry.condition === undefined ? {} : { condition: entry.condition }) };
    return { Update: { ...common, Key: entry.key, ...expressions(parts, entry.values), UpdateExpression: entry.update } };
  }
  return { ConditionCheck: { ...common, Key: entry.key, ...expressions({ condition: entry.condition }, entry.values), ConditionExpression: entry.condition } };
};

/**
 * Writes all items or none, retrying when it loses a race with another transaction. Each attempt
 * carries a fresh `ClientRequestToken`, which makes the SDK's own retry of a request whose
 * response was lost idempotent (DynamoDB answers the retry with the first result for ten
 * minutes): without it, a lost response could charge a budget twice.
 */
export const transact = (ctx: LedgerContext, op: Operation, items: readonly LedgerTransactItem[]): Promise<void> =>
  retryConflicts(ctx.conflictRetry, op, async () => {
    await ctx.client.send(
      new TransactWriteCommand({
        ClientRequestToken: ctx.newId(),
        TransactItems: items.map((entry) => transactItem(ctx.tableName, entry)),
      }),
    );
  });

/** Every item of a partition (optionally only those whose sort key starts with `prefix`, optionally projected), strongly consistent, all pages. */
export const queryPartition = async (ctx: LedgerContext, pk: string, prefix?: string, projection?: string): Promise<Record<string, unknown>[]> => {
  const parts = {
    keyCondition: prefix === undefined ? '#pk = :pk' : '#pk = :pk AND begins_with(#sk, :prefix)',
    ...(projection === undefined ? {} : { projection }),
  };
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await ctx.client.send(
      new QueryCommand({ TableName: ctx.tableName, ConsistentRead: true, ExclusiveStartKey: start, ...expressions(parts, { ':pk': pk, ':prefix': prefix }) }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return items;
};

/**
 * Runs `fn` over `inputs` with at most `limit` calls in flight, keeping input order in the result.
 *
 * @example
 * await mapLimit(subtasks, 8, (s) => closeSubtask(ctx, s));
 */
export const mapLimit = async <In, Out>(inputs: readonly In[], limit: number, fn: (input: In) => Promise<Out>): Promise<Out[]> => {
  const results = new Array<Out>(inputs.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < inputs.length) {
      const index = next++;
      results[index] = await fn(inputs[index] as In);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, inputs.length) }, lane));
  return results;
};
