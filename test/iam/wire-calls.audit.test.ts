/**
 * The grant of each function (`LEDGER_ACTIONS`, lib/ledger/access.ts) against the ledger calls
 * the integration suites sent on the wire (test/support/wire-calls.ts). Runs after them (the
 * `audit` project of vitest.config.ts), so it needs them in the same run:
 * `npx vitest run test/functions test/ledger test/iam`.
 *
 * It fails both ways: a function that sends an action its grant lacks would be refused by IAM on
 * AWS, and a granted action no suite ever sends is privilege nobody showed a need for.
 */
import { describe, expect, it } from 'vitest';
import { LEDGER_ACTIONS, LEDGER_FUNCTIONS, isTenantScoped } from '../../lib/ledger/access';
import { tenantKeyPrefix } from '../../lib/ledger/keys';
import { grantOf, joinedCalls, type Grant } from './calls';

const joined = joinedCalls();

describe('the ledger calls the integration suites recorded', () => {
  it('came from the function suites and the ledger suites of this run', () => {
    // Without them there is nothing to compare: run this file together with the suites.
    expect(
      joined.files.some((f) => f.startsWith('fn-')),
      `recorded: ${joined.files.join(', ') || 'nothing'}`,
    ).toBe(true);
    expect(
      joined.files.some((f) => f.startsWith('ledger-')),
      `recorded: ${joined.files.join(', ') || 'nothing'}`,
    ).toBe(true);
  });

  it.each(LEDGER_FUNCTIONS)('%s: the grant is exactly the actions its calls need', (fn) => {
    const granted = new Set<Grant>([
      ...LEDGER_ACTIONS[fn].table.map((a) => `table ${a}` as const),
      ...LEDGER_ACTIONS[fn].runListIndex.map((a) => `runListIndex ${a}` as const),
    ]);
    const used = new Set(joined.callsOf(fn).map(grantOf));
    const missing = [...used].filter((g) => !granted.has(g)).sort();
    const unused = [...granted].filter((g) => !used.has(g)).sort();
    expect({ missing, unused }).toEqual({ missing: [], unused: [] });
  });

  it.each(LEDGER_FUNCTIONS.filter(isTenantScoped))("%s: every call is sent acting for a tenant, for that tenant's keys only", (fn) => {
    const own = joined.calls.filter((c) => c.fn === fn);
    expect(own.length).toBeGreaterThan(0);
    const outsideItsTenant = (c: (typeof own)[number]) => c.leadingKeys.some((k) => !k.startsWith(tenantKeyPrefix(c.tenant ?? '')));
    const astray = own.filter((c) => c.tenant === undefined || c.leadingKeys.length === 0 || outsideItsTenant(c));
    expect(astray).toEqual([]);
  });

  it('no function sends Scan, DeleteItem, BatchGetItem or DescribeTable', () => {
    const sent = new Set(joined.calls.filter((c) => c.fn !== undefined).map((c) => c.action));
    for (const action of ['dynamodb:Scan', 'dynamodb:DeleteItem', 'dynamodb:BatchGetItem', 'dynamodb:DescribeTable']) expect(sent.has(action)).toBe(false);
  });
});
