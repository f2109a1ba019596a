/**
 * What each of tessera's functions may do to the ledger, in one place: the DynamoDB actions its
 * code uses, on the table and on the run list index, and the session policy that narrows a
 * tenant-scoped function's credentials to one tenant's keys. CDK-free and SDK-free: the construct
 * (lib/infra/fan-out.ts) grants exactly these, the functions' credential provider
 * (lib/runtime/ledger-credentials.ts) asks STS for exactly this session policy, and the tests
 * compare both with the calls the integration suites make on the wire and with an offline IAM
 * policy simulator (test/iam).
 */
import { tenantKeyPrefix } from './keys';

/** The five functions of a fan-out, by the name their module has under functions/. */
export const LEDGER_FUNCTIONS = ['api', 'dispatch', 'deadline', 'worker', 'reconcile'] as const;
export type LedgerFunction = (typeof LEDGER_FUNCTIONS)[number];

/** A DynamoDB data-plane action, as IAM names it. */
export type LedgerAction =
  'dynamodb:GetItem' | 'dynamodb:Query' | 'dynamodb:PutItem' | 'dynamodb:UpdateItem' | 'dynamodb:ConditionCheckItem' | 'dynamodb:BatchWriteItem';

/** One function's ledger grant: actions on the table's items, and on the run list index. */
export interface LedgerGrant {
  readonly table: readonly LedgerAction[];
  readonly runListIndex: readonly LedgerAction[];
}

/**
 * The ledger actions of each function: exactly those its code sends, found by what the ledger
 * module sends for each use case (a transaction is authorized item by item: `TransactWriteItems`
 * needs PutItem, UpdateItem or ConditionCheckItem per item, `TransactGetItems` GetItem). None holds
 * Scan, DeleteItem, BatchGetItem or DescribeTable: no function sends them.
 * test/iam/wire-calls.audit.test.ts fails when a function sends an action not listed here, or
 * when one listed here is never sent by the integration suites.
 */
export const LEDGER_ACTIONS = {
  // Creates runs (Put of the run, meta, summary and idempotency items), reads them, lists them on
  // the run list index, pages subtasks, and cancels (Update of the run, its block and summary).
  api: { table: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem'], runListIndex: ['dynamodb:Query'] },
  // Reads the manifest, appends a round (chunked transactions with a ConditionCheck on the run),
  // and writes a batched round's batch items in BatchWriteItem.
  dispatch: {
    table: ['dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem', 'dynamodb:BatchWriteItem'],
    runListIndex: [],
  },
  // Reads one subtask or one batch item, registers its waiter, starts a hedge, seals.
  deadline: { table: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'], runListIndex: [] },
  // Claims, reserves budget (run, subtask, tenant day and its blocks), records outcomes.
  worker: { table: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'], runListIndex: [] },
  // Reads the manifest and outcomes, appends the next round as it plans it (a transaction that
  // checks the run is still running), writes the answer (in parts when it is large).
  reconcile: {
    table: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'],
    runListIndex: [],
  },
} as const satisfies Record<LedgerFunction, LedgerGrant>;

/**
 * The functions that act for one tenant at a time and reach the ledger with credentials IAM
 * restricts to that tenant's partition keys: the api per request, dispatch and deadline per run,
 * the worker per claimed subtask. Reconcile keeps its own role's grant (docs/architecture.md,
 * "Trust model").
 */
export const TENANT_SCOPED_FUNCTIONS = ['api', 'dispatch', 'deadline', 'worker'] as const satisfies readonly (TenantScopedFunction & LedgerFunction)[];
/** A function that reaches the ledger with per-tenant credentials; see {@link TENANT_SCOPED_FUNCTIONS}. */
export type TenantScopedFunction = 'api' | 'dispatch' | 'deadline' | 'worker';

/** @example isTenantScoped('worker') // true */
export const isTenantScoped = (fn: LedgerFunction): fn is TenantScopedFunction => (TENANT_SCOPED_FUNCTIONS as readonly string[]).includes(fn);

/**
 * The `dynamodb:LeadingKeys` pattern of one tenant: its key prefix and `*`. `StringLike` treats
 * `*` and `?` as wildcards; percent-encoding leaves `*` as it is (and encodes `?`), so a literal
 * `*` of a tenant is written `${*}`, IAM's escape, or tenant `a*` would match tenant `ab`'s keys.
 *
 * @example
 * tenantKeyPattern('acme') // 'T#acme#*'
 * tenantKeyPattern('a*') // 'T#a${*}#*'
 */
export const tenantKeyPattern = (tenantId: string): string => `${tenantKeyPrefix(tenantId).replaceAll('*', '${*}')}*`;

/**
 * The session policy a tenant-scoped function passes to `sts:AssumeRole`: the session may touch
 * only items and index entries whose partition key starts with the tenant's prefix, and only in
 * requests that name their keys (`Null` false: a request without leading keys, a Scan, is
 * refused). The session's permissions are the intersection of this and the access role's policy,
 * so it narrows the role's actions to the tenant and never widens them.
 *
 * @example
 * JSON.parse(tenantSessionPolicy('acme')).Statement[0].Condition['ForAllValues:StringLike']
 * // { 'dynamodb:LeadingKeys': ['T#acme#*'] }
 */
export const tenantSessionPolicy = (tenantId: string): string =>
  JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Action: 'dynamodb:*',
        Resource: '*',
        Condition: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [tenantKeyPattern(tenantId)] },
          Null: { 'dynamodb:LeadingKeys': 'false' },
        },
      },
    ],
  });
