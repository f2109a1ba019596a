/**
 * Records the ledger calls a function's client sends, as IAM authorizes them: one entry per IAM
 * action (a transaction is authorized item by item), with the resource (the table or the run list
 * index), the partition keys (`dynamodb:LeadingKeys`), the attribute names a write sets
 * (`dynamodb:Attributes`) and the tenant the function was acting for when it sent it. A middleware
 * on the client's own stack sees each request after marshalling, exactly as it goes on the wire.
 *
 * The integration suites attach it to each handler's ledger client (test/functions/support); each
 * test file writes its calls to `.tessera/wire-calls/` when it ends, and test/iam reads them all.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { ServiceInputTypes, ServiceOutputTypes } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { BuildMiddleware } from '@smithy/types';
import { z } from 'zod';
import { LEDGER_FUNCTIONS, type LedgerFunction } from '../../lib/ledger/access';
import { LEDGER_TABLE, RUN_LIST_INDEX } from '../../lib/ledger/table';
import { actingTenant } from '../../lib/runtime/tenant-scope';

/** Where the integration suites leave their recorded calls (git-ignored). */
export const WIRE_CALLS_DIR = resolve(import.meta.dirname, '../../.tessera/wire-calls');

export const WireCall = z.object({
  /** The function whose handler sent it; absent for the ledger suites, which call the ledger directly. */
  fn: z.enum(LEDGER_FUNCTIONS).optional(),
  /** The ledger method that sent it (`claimSubtask`), when the ledger was wrapped by {@link tagLedger}. */
  method: z.string().optional(),
  /** The operation sent, `TransactWriteItems`, say. */
  operation: z.string(),
  /** The IAM action authorized, `dynamodb:PutItem` for a Put inside that transaction. */
  action: z.string(),
  resource: z.enum(['table', 'runListIndex']),
  leadingKeys: z.array(z.string()),
  /** Names a write sets (a Put's item attributes, the names an UpdateExpression assigns); absent for reads. */
  attributes: z.array(z.string()).optional(),
  /** The tenant bound by `actingFor` when the call was sent; absent outside any binding. */
  tenant: z.string().optional(),
});
export type WireCall = z.infer<typeof WireCall>;

type Marshalled = Record<string, { S?: string } | undefined>;
interface Input {
  TableName?: string;
  IndexName?: string;
  Key?: Marshalled;
  Item?: Marshalled;
  UpdateExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Marshalled;
  TransactItems?: Record<string, Input | undefined>[];
  RequestItems?: Record<string, { PutRequest?: { Item: Marshalled }; DeleteRequest?: { Key: Marshalled }; Keys?: Marshalled[] }[] | { Keys: Marshalled[] }>;
}

const pkOf = (key: Marshalled | undefined): string[] => {
  const pk = key?.[LEDGER_TABLE.partitionKey]?.S;
  return pk === undefined ? [] : [pk];
};

/** Top-level names an UpdateExpression sets or removes: `#name` tokens not after a `.`. */
const updatedNames = (input: Input): string[] =>
  [...(input.UpdateExpression ?? '').matchAll(/(?<![.\w])#[A-Za-z][A-Za-z0-9_]*/g)].map((m) => input.ExpressionAttributeNames?.[m[0]] ?? m[0]);

const ITEM_ACTIONS: Readonly<Record<string, string>> = {
  Put: 'dynamodb:PutItem',
  Update: 'dynamodb:UpdateItem',
  ConditionCheck: 'dynamodb:ConditionCheckItem',
  Delete: 'dynamodb:DeleteItem',
  Get: 'dynamodb:GetItem',
};

type Call = Omit<WireCall, 'fn' | 'tenant' | 'operation'>;

const itemCall = (kind: string, input: Input): Call => ({
  action: ITEM_ACTIONS[kind] ?? `dynamodb:${kind}`,
  resource: 'table',
  leadingKeys: pkOf(kind === 'Put' ? input.Item : input.Key),
  ...(kind === 'Put' ? { attributes: Object.keys(input.Item ?? {}) } : kind === 'Update' ? { attributes: updatedNames(input) } : {}),
});

/** The IAM view of one request: what is authorized, on which resource, for which keys. */
export const iamCalls = (operation: string, input: Input): Call[] => {
  switch (operation) {
    case 'GetItem':
      return [itemCall('Get', input)];
    case 'PutItem':
      return [itemCall('Put', input)];
    case 'UpdateItem':
      return [itemCall('Update', input)];
    case 'DeleteItem':
      return [itemCall('Delete', input)];
    case 'TransactGetItems':
    case 'TransactWriteItems':
      return (input.TransactItems ?? []).flatMap((entry) => Object.entries(entry).flatMap(([kind, item]) => (item ? [itemCall(kind, item)] : [])));
    case 'Query': {
      const index = input.IndexName === RUN_LIST_INDEX.indexName;
      const pk = input.ExpressionAttributeValues?.[':pk']?.S;
      return [{ action: 'dynamodb:Query', resource: index ? 'runListIndex' : 'table', leadingKeys: pk === undefined ? [] : [pk] }];
    }
    case 'BatchWriteItem': {
      const requests = Object.values(input.RequestItems ?? {}).flatMap((r) => (Array.isArray(r) ? r : []));
      const items = requests.flatMap((r) => (r.PutRequest ? [r.PutRequest.Item] : []));
      return [
        {
          action: 'dynamodb:BatchWriteItem',
          resource: 'table',
          leadingKeys: [...new Set(requests.flatMap((r) => pkOf(r.PutRequest?.Item ?? r.DeleteRequest?.Key)))],
          attributes: [...new Set(items.flatMap((item) => Object.keys(item)))],
        },
      ];
    }
    default:
      // Scan, BatchGetItem, DescribeTable …: recorded as sent, so the audit names them.
      return [{ action: `dynamodb:${operation}`, resource: input.IndexName === undefined ? 'table' : 'runListIndex', leadingKeys: [] }];
  }
};

const methodScope = new AsyncLocalStorage<string>();

/**
 * The same ledger, each of whose methods runs with its name bound, so the calls it sends are
 * recorded under that name. The audit joins the two views: which methods a function's handler
 * calls (test/functions), and which IAM calls each method sends (every suite, the ledger's own
 * included), so a path only the ledger suite reaches still counts for the functions that use it.
 */
export const tagLedger = <L extends object>(ledger: L): L =>
  new Proxy(ledger, {
    get: (target, name, receiver) => {
      const value: unknown = Reflect.get(target, name, receiver);
      if (typeof value !== 'function' || typeof name !== 'string') return value;
      // Only the outermost method names the calls: a method calling another keeps its own name.
      return (...args: unknown[]) =>
        methodScope.getStore() === undefined ? methodScope.run(name, () => value.apply(target, args)) : value.apply(target, args);
    },
  });

/** A sink of one test file's calls. */
export interface WireRecorder {
  readonly calls: WireCall[];
  /** Attaches the recorder to a client (each handler's own), tagging its calls with `fn` when given. */
  attach(client: DynamoDBDocumentClient, fn?: LedgerFunction): DynamoDBDocumentClient;
  /** Writes the calls to {@link WIRE_CALLS_DIR} under `name`. */
  flush(name: string): void;
}

export const wireRecorder = (): WireRecorder => {
  const calls: WireCall[] = [];
  return {
    calls,
    attach: (client, fn) => {
      const record: BuildMiddleware<ServiceInputTypes, ServiceOutputTypes> = (next, context) => async (args) => {
        const operation = String(context.commandName ?? '').replace(/Command$/, '');
        const tenant = actingTenant();
        const method = methodScope.getStore();
        const tags = { ...(fn === undefined ? {} : { fn }), ...(method === undefined ? {} : { method }), ...(tenant === undefined ? {} : { tenant }) };
        for (const call of iamCalls(operation, args.input as unknown as Input)) calls.push({ operation, ...call, ...tags });
        return next(args);
      };
      client.middlewareStack.add(record, { step: 'build', name: 'tesseraWireCalls' });
      return client;
    },
    flush: (name) => {
      mkdirSync(WIRE_CALLS_DIR, { recursive: true });
      writeFileSync(join(WIRE_CALLS_DIR, `${name}-${randomUUID().slice(0, 8)}.json`), JSON.stringify(calls));
    },
  };
};

/** Forgets every earlier run's calls (the integration project's global setup). */
export const clearWireCalls = (): void => rmSync(WIRE_CALLS_DIR, { recursive: true, force: true });

/** Every call the suites recorded, with the files they came from. */
export const readWireCalls = (): { files: string[]; calls: WireCall[] } => {
  const files = (() => {
    try {
      return readdirSync(WIRE_CALLS_DIR).filter((f) => f.endsWith('.json'));
    } catch {
      return [];
    }
  })();
  return { files, calls: files.flatMap((f) => z.array(WireCall).parse(JSON.parse(readFileSync(join(WIRE_CALLS_DIR, f), 'utf8')))) };
};
