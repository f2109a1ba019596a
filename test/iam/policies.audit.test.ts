/**
 * The synthesized policies, evaluated offline by an IAM policy simulator
 * (`@cloud-copilot/iam-simulate`) on the ledger requests the integration suites recorded on the
 * wire: each is allowed as sent, and denied with another tenant's keys; no function may Scan or
 * DeleteItem; the api may not write an outcome attribute, whether or not its request names it.
 * Runs after the integration project (the `audit` project of vitest.config.ts):
 * `npx vitest run test/functions test/ledger test/iam`.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { isTenantScoped, LEDGER_ACTIONS, LEDGER_FUNCTIONS, type LedgerFunction } from '../../lib/ledger/access';
import { OUTCOME_ATTRIBUTES } from '../../lib/ledger/items';
import { runKey, tenantKeyPrefix } from '../../lib/ledger/keys';
import { synthTesseraStack, type Synthesized } from '../infra/synth';
import { grantOf, joinedCalls, tenantOfKey } from './calls';
import { decide, functionRoleId, ledgerRoleId, roleStatements, type LedgerRequest } from './policies';

let synth: Synthesized;
const joined = joinedCalls();
beforeAll(() => {
  synth = synthTesseraStack();
});

const statementsOf = (fn: LedgerFunction) => roleStatements(synth, ledgerRoleId(synth, fn));

/** One request of each shape a function sent (action, resource, attributes), with its first partition key. */
const requestsOf = (fn: LedgerFunction): LedgerRequest[] => {
  const byShape = new Map<string, LedgerRequest>();
  for (const call of joined.callsOf(fn)) {
    const shape = `${call.action} ${call.resource} ${call.attributes === undefined ? '-' : [...call.attributes].sort().join(',')}`;
    if (!byShape.has(shape)) byShape.set(shape, call);
  }
  return [...byShape.values()];
};

/** The same request for `other`'s keys: every key's tenant prefix replaced. */
const withTenant = (request: LedgerRequest, other: string): LedgerRequest => ({
  ...request,
  leadingKeys: request.leadingKeys.map((k) => tenantKeyPrefix(other) + k.slice(tenantKeyPrefix(tenantOfKey(k)).length)),
});

/** The session a request is signed in: its tenant's, for a tenant-scoped function; reconcile has none. */
const sessionOf = (fn: LedgerFunction, request: LedgerRequest): string | undefined =>
  isTenantScoped(fn) && request.leadingKeys[0] !== undefined ? tenantOfKey(request.leadingKeys[0]) : undefined;

/** The DynamoDB actions on a table's items that a policy could grant. */
const DATA_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:Scan',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:ConditionCheckItem',
  'dynamodb:DescribeTable',
  'dynamodb:PartiQLSelect',
  'dynamodb:PartiQLInsert',
  'dynamodb:PartiQLUpdate',
  'dynamodb:PartiQLDelete',
] as const;
const WRITES = new Set(['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:BatchWriteItem', 'dynamodb:PartiQLInsert', 'dynamodb:PartiQLUpdate']);
const ACME_RUN = runKey('acme', 'r-1').pk;

describe.each(LEDGER_FUNCTIONS)('the %s function, simulated', (fn) => {
  it('is allowed every request its code sent on the wire', async () => {
    const requests = requestsOf(fn);
    expect(requests.length).toBeGreaterThan(0);
    const refused = [];
    for (const request of requests) {
      const decision = await decide(statementsOf(fn), request, sessionOf(fn, request));
      if (decision !== 'Allowed') refused.push({ ...request, decision });
    }
    expect(refused).toEqual([]);
  });

  it('is allowed exactly the actions its code sends, on each resource: a grant beyond them, or short of them, fails', async () => {
    const used = new Set(joined.callsOf(fn).map(grantOf));
    for (const resource of ['table', 'runListIndex'] as const) {
      const pk = resource === 'table' ? ACME_RUN : `${tenantKeyPrefix('acme')}RUNS#running`;
      const allowed = [];
      for (const action of DATA_ACTIONS) {
        const request = { action, resource, leadingKeys: [pk], ...(WRITES.has(action) ? { attributes: ['status'] } : {}) };
        if ((await decide(statementsOf(fn), request, isTenantScoped(fn) ? 'acme' : undefined)) === 'Allowed') allowed.push(`${resource} ${action}`);
      }
      expect(allowed.sort()).toEqual([...used].filter((g) => g.startsWith(`${resource} `)).sort());
    }
  });

  it('is denied Scan and DeleteItem, with or without keys, in a session or not', async () => {
    for (const action of ['dynamodb:Scan', 'dynamodb:DeleteItem']) {
      for (const leadingKeys of [[], [ACME_RUN]]) {
        expect(await decide(statementsOf(fn), { action, resource: 'table', leadingKeys }, 'acme')).not.toBe('Allowed');
        expect(await decide(statementsOf(fn), { action, resource: 'table', leadingKeys })).not.toBe('Allowed');
      }
    }
  });
});

describe.each(LEDGER_FUNCTIONS.filter(isTenantScoped))('the tenant-scoped %s function, simulated', (fn) => {
  it("is denied every one of its requests for another tenant's keys, and for its own and another's at once", async () => {
    const allowedAstray = [];
    for (const request of requestsOf(fn)) {
      const tenant = sessionOf(fn, request) ?? '';
      const other = withTenant(request, `${tenant}-other`);
      if ((await decide(statementsOf(fn), other, tenant)) === 'Allowed') allowedAstray.push(other);
      const mixed = { ...request, leadingKeys: [...request.leadingKeys, ...other.leadingKeys] };
      if ((await decide(statementsOf(fn), mixed, tenant)) === 'Allowed') allowedAstray.push(mixed);
    }
    expect(allowedAstray).toEqual([]);
  });

  it("reaches no ledger item with its own role's credentials (only by assuming its ledger-access role)", async () => {
    const own = roleStatements(synth, functionRoleId(synth, fn));
    for (const request of requestsOf(fn)) expect(await decide(own, request)).toBe('ImplicitlyDenied');
  });

  it('keeps any two tenants apart, whatever their names (`*`, `#`, `%`, `?`, non-ASCII)', async () => {
    const tenant = fc.string({ unit: fc.constantFrom('a', 'b', '*', '?', '#', '%', '2', 'é', '€', ' '), minLength: 1, maxLength: 6 });
    await fc.assert(
      fc.asyncProperty(tenant, tenant, async (mine, theirs) => {
        fc.pre(mine !== theirs);
        const request = { action: LEDGER_ACTIONS[fn].table[0], resource: 'table' as const, leadingKeys: [runKey(theirs, 'r-1').pk], attributes: ['status'] };
        expect(await decide(statementsOf(fn), request, mine)).toBe('ImplicitlyDenied');
        expect(await decide(statementsOf(fn), { ...request, leadingKeys: [runKey(mine, 'r-1').pk] }, mine)).toBe('Allowed');
      }),
      { numRuns: 60 },
    );
  });
});

describe('the api function, simulated', () => {
  const write = (action: string, attributes?: readonly string[]): LedgerRequest => ({ action, resource: 'table', leadingKeys: [ACME_RUN], attributes });

  it('is denied a write of any outcome attribute, alone or beside others', async () => {
    for (const action of ['dynamodb:PutItem', 'dynamodb:UpdateItem']) {
      for (const attribute of OUTCOME_ATTRIBUTES) {
        expect(await decide(statementsOf('api'), write(action, [attribute]), 'acme')).toBe('ExplicitlyDenied');
        expect(await decide(statementsOf('api'), write(action, ['pk', 'sk', 'state', attribute]), 'acme')).toBe('ExplicitlyDenied');
      }
    }
  });

  it('is denied a write that names no attribute, which a Deny on attribute values alone would let through', async () => {
    for (const action of ['dynamodb:PutItem', 'dynamodb:UpdateItem']) expect(await decide(statementsOf('api'), write(action), 'acme')).toBe('ExplicitlyDenied');
  });

  it('is allowed the writes it sends, which name no outcome attribute', async () => {
    const writes = requestsOf('api').filter((r) => r.attributes !== undefined);
    expect(writes.length).toBeGreaterThan(0);
    for (const request of writes) expect(request.attributes?.filter((a) => (OUTCOME_ATTRIBUTES as readonly string[]).includes(a))).toEqual([]);
  });
});

describe('the reconcile function, simulated', () => {
  it("is not tenant-scoped: its own role reaches any tenant's run (the limit docs/architecture.md states)", async () => {
    const request = { action: 'dynamodb:GetItem', resource: 'table' as const, leadingKeys: [runKey('anyone', 'r-1').pk] };
    expect(await decide(statementsOf('reconcile'), request)).toBe('Allowed');
  });
});
