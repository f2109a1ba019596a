/**
 * The tenant-scoped ledger client on DynamoDB Local, with its credentials from a local STS
 * endpoint (test/support/sts-local.ts) and a clock the test moves: one AssumeRole per tenant per
 * validity window, a refresh before expiry, each request signed with its own tenant's
 * credentials, and nothing sent while acting for no tenant.
 */
import { DynamoDBClient, type ServiceInputTypes, type ServiceOutputTypes } from '@aws-sdk/client-dynamodb';
import { STSClient } from '@aws-sdk/client-sts';
import type { FinalizeRequestMiddleware } from '@smithy/types';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { tenantSessionPolicy } from '../../lib/ledger/access';
import { createLedger, ledgerTableDefinition, type Ledger } from '../../lib/ledger';
import { NoTenantBound } from '../../lib/runtime/errors';
import { REFRESH_BEFORE_MS, SESSION_SECONDS, sessionName, tenantCredentials, tenantScopedClient } from '../../lib/runtime/ledger-credentials';
import { actingFor, actingTenant } from '../../lib/runtime/tenant-scope';
import { taxYearRequest } from '../ledger/support';
import { createTable, dynamoClient, localCredentials, localRegion, uniqueName } from '../support/aws';
import { startLocalSts, type LocalSts } from '../support/sts-local';

const ROLE = 'arn:aws:iam::123456789012:role/WorkerLedgerAccess';
const MINUTE = 60_000;

let instant = Date.parse('2040-06-01T12:00:00.000Z');
const clock = { now: () => instant };
let sts: LocalSts;
let tableName: string;
/** The session token each DynamoDB request was signed with, by the tenant the test acted for. */
const signedWith: { tenant: string; sessionToken: string }[] = [];

/** A fresh cache and client, as one cold start builds them. */
const coldStart = (): Ledger => {
  const stsClient = new STSClient({ endpoint: sts.endpoint, region: localRegion, credentials: localCredentials });
  const credentials = tenantCredentials({ sts: stsClient, roleArn: ROLE, now: clock.now });
  const client = tenantScopedClient({
    credentials,
    translateConfig: { marshallOptions: { removeUndefinedValues: true } },
    newClient: (provider) => {
      const dynamo = new DynamoDBClient({ endpoint: inject('dynamoEndpoint'), region: localRegion, credentials: provider });
      const seeSignature: FinalizeRequestMiddleware<ServiceInputTypes, ServiceOutputTypes> = (next) => async (args) => {
        const token = (args.request as { headers: Record<string, string | undefined> }).headers['x-amz-security-token'];
        signedWith.push({ tenant: actingTenant() ?? '(none)', sessionToken: token ?? '(none)' });
        return next(args);
      };
      dynamo.middlewareStack.add(seeSignature, { step: 'finalizeRequest', priority: 'low', name: 'seeSignature' });
      return dynamo;
    },
  });
  return createLedger({ client, tableName, now: clock.now });
};
const as = <T>(tenant: string, work: () => Promise<T>): Promise<T> => actingFor(tenant, work);

const newRun = (ledger: Ledger, tenantId: string) => as(tenantId, () => ledger.createRun({ tenantId, runId: uniqueName('run'), request: taxYearRequest() }));

beforeAll(async () => {
  sts = await startLocalSts(clock.now);
  tableName = uniqueName('ledger-credentials');
  await createTable(dynamoClient(), ledgerTableDefinition(tableName));
});
afterAll(() => sts.stop());
beforeEach(() => {
  sts.calls.length = 0;
  signedWith.length = 0;
});

describe('tenant-scoped ledger credentials', () => {
  it("assume the role once per tenant, with that tenant's session policy, and sign each request as its tenant", async () => {
    const ledger = coldStart();
    const acme = await newRun(ledger, 'acme');
    const globex = await newRun(ledger, 'globex');
    for (let i = 0; i < 5; i += 1) {
      await as('acme', () => ledger.getRun('acme', acme.run.runId));
      await as('globex', () => ledger.getRun('globex', globex.run.runId));
    }
    expect(sts.calls.map(({ roleArn, sessionName: name, policy, durationSeconds }) => ({ roleArn, name, policy, durationSeconds }))).toEqual([
      { roleArn: ROLE, name: sessionName('acme'), policy: tenantSessionPolicy('acme'), durationSeconds: SESSION_SECONDS },
      { roleArn: ROLE, name: sessionName('globex'), policy: tenantSessionPolicy('globex'), durationSeconds: SESSION_SECONDS },
    ]);
    // The local endpoint numbers its sessions: acme's is the first, globex's the second.
    expect(new Set(signedWith.filter((s) => s.tenant === 'acme').map((s) => s.sessionToken))).toEqual(new Set(['token-1']));
    expect(new Set(signedWith.filter((s) => s.tenant === 'globex').map((s) => s.sessionToken))).toEqual(new Set(['token-2']));
  });

  it("keep a tenant's credentials until five minutes before they expire, then assume the role again, once", async () => {
    const ledger = coldStart();
    const { run } = await newRun(ledger, 'initech');
    const read = () => as('initech', () => ledger.getRun('initech', run.runId));
    const start = instant;
    expect(sts.calls).toHaveLength(1);
    // An hour's session; at 55 minutes less 1 ms it has 5 minutes and 1 ms left: still used.
    instant = start + SESSION_SECONDS * 1000 - REFRESH_BEFORE_MS - 1;
    await read();
    expect(sts.calls).toHaveLength(1);
    // One millisecond later it is within the margin: replaced before the request goes out.
    instant += 1;
    await read();
    await read();
    expect(sts.calls).toHaveLength(2);
    expect(sts.calls[1]?.at).toBe(start + 55 * MINUTE);
    expect(signedWith[0]?.sessionToken).not.toBe(signedWith.at(-1)?.sessionToken);
    expect(new Set(signedWith.slice(-2).map((s) => s.sessionToken)).size).toBe(1);
    // The new session is good for its own hour.
    instant += 54 * MINUTE;
    await read();
    expect(sts.calls).toHaveLength(2);
  });

  it('share one AssumeRole among concurrent first requests of a tenant', async () => {
    const ledger = coldStart();
    const { run } = await newRun(ledger, 'hooli');
    sts.calls.length = 0;
    const fresh = coldStart();
    await Promise.all(Array.from({ length: 8 }, () => as('hooli', () => fresh.getRun('hooli', run.runId))));
    expect(sts.calls.map((c) => c.sessionName)).toEqual([sessionName('hooli')]);
  });

  it('refuse a request made while acting for no tenant, before any credentials are asked for', async () => {
    const ledger = coldStart();
    await expect(ledger.getRun('acme', 'r-none')).rejects.toBeInstanceOf(NoTenantBound);
    expect(sts.calls).toEqual([]);
    expect(signedWith).toEqual([]);
  });
});
