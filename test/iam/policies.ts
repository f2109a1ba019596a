/**
 * The synthesized IAM policies of each function, as an offline simulator needs them: every
 * AWS::IAM::Policy attached to a role, with the template's references to the table replaced by a
 * concrete ARN (the only references a ledger statement holds), and the simulation of one ledger
 * request with `@cloud-copilot/iam-simulate`.
 */
import { runSimulation } from '@cloud-copilot/iam-simulate';
import { z } from 'zod';
import { LEDGER_FUNCTIONS, tenantSessionPolicy, type LedgerFunction } from '../../lib/ledger/access';
import { RUN_LIST_INDEX } from '../../lib/ledger/table';
import { logicalIdAt, type Synthesized } from '../infra/synth';
import type { WireCall } from '../support/wire-calls';

export const ACCOUNT = '123456789012';
export const TABLE_ARN = `arn:aws:dynamodb:eu-west-1:${ACCOUNT}:table/tessera-ledger`;
export const INDEX_ARN = `${TABLE_ARN}/index/${RUN_LIST_INDEX.indexName}`;

const FUNCTION_IDS = { api: 'Api', dispatch: 'Dispatch', deadline: 'Deadline', worker: 'Worker', reconcile: 'Reconcile' } as const satisfies Record<
  LedgerFunction,
  string
>;

const PolicyResource = z.object({
  Properties: z.object({ Roles: z.array(z.object({ Ref: z.string() })), PolicyDocument: z.object({ Statement: z.array(z.unknown()) }) }),
});

/**
 * Replaces the table's `Fn::GetAtt` by {@link TABLE_ARN} and evaluates `Fn::Join`; any other
 * reference (a queue, a log group, a state machine) becomes an ARN of a service no ledger request
 * names, so its statement is evaluated and matches nothing here.
 */
const resolveTable = (value: unknown, tableId: string): unknown => {
  if (Array.isArray(value)) return value.map((v) => resolveTable(v, tableId));
  if (value === null || typeof value !== 'object') return value;
  const record = value as Record<string, unknown>;
  const getAtt = record['Fn::GetAtt'];
  if (Array.isArray(getAtt) && getAtt[0] === tableId && getAtt[1] === 'Arn') return TABLE_ARN;
  const join = record['Fn::Join'];
  if (Array.isArray(join) && typeof join[0] === 'string' && Array.isArray(join[1])) {
    const parts = (join[1] as unknown[]).map((p) => resolveTable(p, tableId));
    if (parts.every((p) => typeof p === 'string')) return parts.join(join[0]);
  }
  if (getAtt !== undefined || join !== undefined || record.Ref !== undefined) {
    return `arn:aws:cloudformation:::unresolved/${JSON.stringify(record).replace(/[^\w]/g, '')}`;
  }
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, resolveTable(v, tableId)]));
};

/** Every statement of every policy attached to the role with logical id `roleId`, the table resolved. */
export const roleStatements = (synth: Synthesized, roleId: string): unknown[] => {
  const tableId = logicalIdAt(synth.template, 'AWS::DynamoDB::Table', '/Ledger/Resource');
  return Object.values(synth.template.findResources('AWS::IAM::Policy'))
    .map((resource) => PolicyResource.parse(resource))
    .filter((policy) => policy.Properties.Roles.some((role) => role.Ref === roleId))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement.map((s) => resolveTable(s, tableId)));
};

/** The role a function's ledger requests are signed with: its ledger-access role, or (reconcile) its own. */
export const ledgerRoleId = (synth: Synthesized, fn: LedgerFunction): string =>
  fn === 'reconcile'
    ? logicalIdAt(synth.template, 'AWS::IAM::Role', `/${FUNCTION_IDS[fn]}Function/Role/Resource`)
    : logicalIdAt(synth.template, 'AWS::IAM::Role', `/${FUNCTION_IDS[fn]}LedgerAccess/Resource`);

/** The function's own execution role. */
export const functionRoleId = (synth: Synthesized, fn: LedgerFunction): string =>
  logicalIdAt(synth.template, 'AWS::IAM::Role', `/${FUNCTION_IDS[fn]}Function/Role/Resource`);

export { LEDGER_FUNCTIONS };

/** One ledger request as IAM sees it. */
export interface LedgerRequest {
  readonly action: string;
  readonly resource: WireCall['resource'];
  readonly leadingKeys: readonly string[];
  readonly attributes?: readonly string[] | undefined;
}

export type Decision = 'Allowed' | 'ExplicitlyDenied' | 'ImplicitlyDenied';

/**
 * IAM's decision on one request signed by a role with `statements`, in a session with the policy
 * of `sessionTenant` (none: the role's own credentials). The request context carries
 * `dynamodb:LeadingKeys` and, when the request names attributes, `dynamodb:Attributes`; a request
 * naming none has no `dynamodb:Attributes` at all, as DynamoDB sends it.
 */
export const decide = async (statements: readonly unknown[], request: LedgerRequest, sessionTenant?: string): Promise<Decision> => {
  const contextVariables: Record<string, string[]> = {};
  if (request.leadingKeys.length > 0) contextVariables['dynamodb:LeadingKeys'] = [...request.leadingKeys];
  if (request.attributes !== undefined && request.attributes.length > 0) contextVariables['dynamodb:Attributes'] = [...request.attributes];
  const result = await runSimulation(
    {
      request: {
        principal: `arn:aws:sts::${ACCOUNT}:assumed-role/ledger-access/session`,
        action: request.action,
        resource: { resource: request.resource === 'runListIndex' ? INDEX_ARN : TABLE_ARN, accountId: ACCOUNT },
        contextVariables,
      },
      identityPolicies: [{ name: 'role', policy: { Version: '2012-10-17', Statement: statements } }],
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      ...(sessionTenant === undefined ? {} : { sessionPolicy: JSON.parse(tenantSessionPolicy(sessionTenant)) as unknown }),
    },
    {},
  );
  if (result.resultType === 'error') throw new Error(`the simulator refused the simulation: ${JSON.stringify(result.errors)}`);
  if (result.resultType !== 'single') throw new Error(`expected one result, got ${result.resultType}`);
  return result.overallResult as Decision;
};
