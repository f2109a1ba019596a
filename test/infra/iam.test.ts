import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { logicalIdAt, synthTesseraStack, type Synthesized } from './synth';
import { OUTCOME_ATTRIBUTES } from '../../lib/ledger/items';
import { referenceRegistry } from '../../examples/app';
import { RUN_LIST_INDEX } from '../../lib/ledger';

const Statement = z.object({
  Sid: z.string().optional(),
  Effect: z.enum(['Allow', 'Deny']),
  Action: z.union([z.string(), z.array(z.string())]).transform((a) => (Array.isArray(a) ? a : [a])),
  Resource: z.unknown().transform((r) => (Array.isArray(r) ? r : [r])),
  Condition: z.unknown().optional(),
});
type Statement = z.infer<typeof Statement>;
const PolicyResource = z.object({
  Properties: z.object({
    Roles: z.array(z.object({ Ref: z.string() })),
    PolicyDocument: z.object({ Statement: z.array(Statement) }),
  }),
});

/** Every statement of every IAM::Policy attached to a role, and whether the role has managed policies. */
const statementsOf = (template: Template, roleId: string): Statement[] =>
  Object.values(template.findResources('AWS::IAM::Policy'))
    .map((resource) => PolicyResource.parse(resource))
    .filter((policy) => policy.Properties.Roles.some((role) => role.Ref === roleId))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement);

const allows = (statements: readonly Statement[], action: string) =>
  statements.filter((s) => s.Effect === 'Allow' && s.Action.some((a) => a === action || (a.endsWith('*') && action.startsWith(a.slice(0, -1)))));

const KIND_QUEUES = referenceRegistry.kinds();

let synth: Synthesized;
let table: { 'Fn::GetAtt': [string, 'Arn'] };
let stateMachine: { Ref: string };
let batchStateMachine: { Ref: string };
const roleId = (fn: string) => logicalIdAt(synth.template, 'AWS::IAM::Role', `/${fn}/Role/Resource`);
const queueArn = (kind: string) => ({ 'Fn::GetAtt': [logicalIdAt(synth.template, 'AWS::SQS::Queue', `/Queues/${kind}/Resource`), 'Arn'] });

beforeAll(() => {
  synth = synthTesseraStack();
  table = { 'Fn::GetAtt': [logicalIdAt(synth.template, 'AWS::DynamoDB::Table', '/Ledger/Resource'), 'Arn'] };
  stateMachine = { Ref: logicalIdAt(synth.template, 'AWS::StepFunctions::StateMachine', '/Runs/StateMachine/Resource') };
  batchStateMachine = { Ref: logicalIdAt(synth.template, 'AWS::StepFunctions::StateMachine', '/Runs/BatchStateMachine/Resource') };
});

const accessRoleId = (fn: string) => logicalIdAt(synth.template, 'AWS::IAM::Role', `/${fn}LedgerAccess/Resource`);
const roleArnOf = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });
const TENANT_SCOPED = ['Api', 'Dispatch', 'Deadline', 'Worker'] as const;

describe('ledger access', () => {
  const listIndex = () => ({ 'Fn::Join': ['', [table, `/index/${RUN_LIST_INDEX.indexName}`]] });

  test('each tenant-scoped function reaches the ledger only through its own ledger-access role', () => {
    for (const fn of TENANT_SCOPED) {
      const own = statementsOf(synth.template, roleId(`${fn}Function`));
      expect(own.filter((s) => s.Action.some((a) => a.startsWith('dynamodb:')))).toEqual([]);
      expect(allows(own, 'sts:AssumeRole')).toEqual([{ Effect: 'Allow', Action: ['sts:AssumeRole'], Resource: [roleArnOf(accessRoleId(fn))] }]);
    }
  });

  test("each ledger-access role trusts exactly its function's role, and no other", () => {
    for (const fn of TENANT_SCOPED) {
      const trust = synth.template.toJSON().Resources[accessRoleId(fn)].Properties.AssumeRolePolicyDocument;
      expect(trust).toEqual({
        Version: '2012-10-17',
        Statement: [{ Effect: 'Allow', Action: 'sts:AssumeRole', Principal: { AWS: roleArnOf(roleId(`${fn}Function`)) } }],
      });
    }
  });

  test('each tenant-scoped function is told its role and the tenant-role mode, and reconcile neither', () => {
    const variables = (fn: string) => {
      const id = logicalIdAt(synth.template, 'AWS::Lambda::Function', `/${fn}Function/Function/Resource`);
      return synth.template.toJSON().Resources[id].Properties.Environment.Variables;
    };
    for (const fn of TENANT_SCOPED) {
      expect(variables(fn)).toMatchObject({ LEDGER_ACCESS: 'tenant-role', LEDGER_ACCESS_ROLE_ARN: roleArnOf(accessRoleId(fn)) });
    }
    expect(variables('Reconcile').LEDGER_ACCESS).toBeUndefined();
  });

  test("the api's role holds exactly its reads and writes, the run list index, and the two Denies on outcome writes", () => {
    const writes = ['dynamodb:BatchWriteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'];
    expect(statementsOf(synth.template, accessRoleId('Api'))).toEqual([
      { Effect: 'Allow', Action: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem'], Resource: [table] },
      { Effect: 'Allow', Action: ['dynamodb:Query'], Resource: [listIndex()] },
      {
        Sid: 'ApiNeverWritesOutcomes',
        Effect: 'Deny',
        Action: writes,
        Resource: [table],
        Condition: { 'ForAnyValue:StringEquals': { 'dynamodb:Attributes': [...OUTCOME_ATTRIBUTES] } },
      },
      { Sid: 'ApiWritesNameTheirAttributes', Effect: 'Deny', Action: writes, Resource: [table], Condition: { Null: { 'dynamodb:Attributes': 'true' } } },
    ]);
  });

  test.each([
    ['Dispatch', ['dynamodb:BatchWriteItem', 'dynamodb:ConditionCheckItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem']],
    ['Deadline', ['dynamodb:ConditionCheckItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']],
    ['Worker', ['dynamodb:ConditionCheckItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem']],
  ])('the %s ledger-access role holds exactly its actions, on the table only', (fn, actions) => {
    expect(statementsOf(synth.template, accessRoleId(fn))).toEqual([{ Effect: 'Allow', Action: actions, Resource: [table] }]);
  });

  test('reconcile, not tenant-scoped, holds exactly its actions on its own role, on the table only', () => {
    const ledger = statementsOf(synth.template, roleId('ReconcileFunction')).filter((s) => s.Action.some((a) => a.startsWith('dynamodb:')));
    const actions = ['dynamodb:ConditionCheckItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem'];
    expect(ledger).toEqual([{ Effect: 'Allow', Action: actions, Resource: [table] }]);
  });

  test('no policy of the stack allows Scan, DeleteItem, BatchGetItem or DescribeTable on the ledger, or any dynamodb wildcard', () => {
    const every = Object.values(synth.template.findResources('AWS::IAM::Policy'))
      .map((resource) => PolicyResource.parse(resource))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement);
    for (const action of ['dynamodb:Scan', 'dynamodb:DeleteItem', 'dynamodb:BatchGetItem', 'dynamodb:DescribeTable']) expect(allows(every, action)).toEqual([]);
    expect(every.filter((s) => s.Action.some((a) => a.startsWith('dynamodb:') && a.includes('*')))).toEqual([]);
  });
});

describe('worker role: no recursion', () => {
  test('cannot start executions, by any action pattern', () => {
    const statements = statementsOf(synth.template, roleId('WorkerFunction'));
    expect(allows(statements, 'states:StartExecution')).toEqual([]);
    expect(allows(statements, 'states:StartSyncExecution')).toEqual([]);
  });

  test('cannot send to any queue', () => {
    expect(allows(statementsOf(synth.template, roleId('WorkerFunction')), 'sqs:SendMessage')).toEqual([]);
  });

  test('consumes exactly the kind queues and answers task tokens', () => {
    const statements = statementsOf(synth.template, roleId('WorkerFunction'));
    const receive = allows(statements, 'sqs:ReceiveMessage');
    expect(receive).toHaveLength(1);
    expect(receive[0]?.Resource).toEqual(expect.arrayContaining(KIND_QUEUES.map(queueArn)));
    expect(receive[0]?.Resource).toHaveLength(KIND_QUEUES.length);
    // A batched round's subtasks wait in the batch machine's executions, so their tokens are its.
    const answers = allows(statements, 'states:SendTaskSuccess').flatMap((s) => s.Resource);
    expect(answers).toHaveLength(2);
    expect(answers).toEqual(expect.arrayContaining([stateMachine, batchStateMachine]));
  });
});

describe('api role', () => {
  test('starts executions of the run state machine only, stops only its executions (a cancel), and answers no task token', () => {
    const statements = statementsOf(synth.template, roleId('ApiFunction'));
    expect(allows(statements, 'states:StartExecution').map((s) => s.Resource)).toEqual([[stateMachine]]);
    const stops = allows(statements, 'states:StopExecution').map((s) => JSON.stringify(s.Resource));
    expect(stops).toHaveLength(1);
    expect(stops[0]).toContain(':execution:');
    expect(stops[0]).toContain(stateMachine.Ref);
    for (const action of ['states:SendTaskSuccess', 'states:SendTaskFailure']) expect(allows(statements, action)).toEqual([]);
  });
});

describe('run state machine role', () => {
  test('starts executions of the batch machine only, and describes or stops only those (StartBatch, .sync:2)', () => {
    const statements = statementsOf(synth.template, logicalIdAt(synth.template, 'AWS::IAM::Role', '/Runs/StateMachine/Role/Resource'));
    expect(allows(statements, 'states:StartExecution').map((s) => s.Resource)).toEqual([[batchStateMachine]]);
    const [describe] = allows(statements, 'states:DescribeExecution');
    expect(JSON.stringify(describe?.Resource)).toContain(batchStateMachine.Ref);
    expect(JSON.stringify(describe?.Resource)).toContain(':execution:');
    expect(allows(statements, 'states:SendTaskSuccess')).toEqual([]);
  });
});

describe('dispatch role', () => {
  test('sends to the kind queues and not to the dead-letter queue', () => {
    const send = allows(statementsOf(synth.template, roleId('DispatchFunction')), 'sqs:SendMessage');
    expect(send).toHaveLength(1);
    expect(send[0]?.Resource).toHaveLength(KIND_QUEUES.length);
    expect(send[0]?.Resource).toEqual(expect.arrayContaining(KIND_QUEUES.map(queueArn)));
    expect(send[0]?.Resource).not.toContainEqual(queueArn('DeadLetter'));
  });

  test('cannot start executions', () => {
    expect(allows(statementsOf(synth.template, roleId('DispatchFunction')), 'states:StartExecution')).toEqual([]);
  });
});

describe('deadline role', () => {
  test('answers task tokens of the run state machine through a standalone policy', () => {
    const statements = statementsOf(synth.template, roleId('DeadlineFunction'));
    expect(allows(statements, 'states:SendTaskSuccess')).toEqual([
      {
        Effect: 'Allow',
        Action: ['states:SendTaskFailure', 'states:SendTaskHeartbeat', 'states:SendTaskSuccess'],
        Resource: expect.arrayContaining([stateMachine, batchStateMachine]),
      },
    ]);
    expect(allows(statements, 'states:StartExecution')).toEqual([]);
  });

  test("sends to the kind queues (a hedged subtask's copies) and not to the dead-letter queue", () => {
    const send = allows(statementsOf(synth.template, roleId('DeadlineFunction')), 'sqs:SendMessage');
    expect(send).toHaveLength(1);
    expect(send[0]?.Resource).toHaveLength(KIND_QUEUES.length);
    expect(send[0]?.Resource).toEqual(expect.arrayContaining(KIND_QUEUES.map(queueArn)));
    expect(send[0]?.Resource).not.toContainEqual(queueArn('DeadLetter'));
  });

  test('cannot consume or purge any queue', () => {
    const statements = statementsOf(synth.template, roleId('DeadlineFunction'));
    for (const action of ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:PurgeQueue', 'sqs:ChangeMessageVisibility'])
      expect(allows(statements, action)).toEqual([]);
  });
});

describe('every function role', () => {
  test('writes only to its own log group and uses no managed policy', () => {
    for (const fn of ['ApiFunction', 'DispatchFunction', 'DeadlineFunction', 'WorkerFunction', 'ReconcileFunction']) {
      const logGroupArn = { 'Fn::GetAtt': [logicalIdAt(synth.template, 'AWS::Logs::LogGroup', `/${fn}/Logs/Resource`), 'Arn'] };
      expect(allows(statementsOf(synth.template, roleId(fn)), 'logs:PutLogEvents').map((s) => s.Resource)).toEqual([[logGroupArn]]);
      expect(synth.template.toJSON().Resources[roleId(fn)].Properties.ManagedPolicyArns).toBeUndefined();
    }
  });

  test('has no bedrock access when the model is offline', () => {
    for (const fn of ['WorkerFunction', 'ReconcileFunction']) {
      expect(allows(statementsOf(synth.template, roleId(fn)), 'bedrock:InvokeModel')).toEqual([]);
    }
  });
});

describe('with a Bedrock model', () => {
  test('the worker and reconcile (a requested synthesis, docs/workers.md "Synthesis") may invoke that one model, and no other function may invoke any', () => {
    const bedrock = synthTesseraStack({ fanOut: { model: { provider: 'bedrock', modelId: 'anthropic.claude-3-haiku-20240307-v1:0' } } });
    const role = (fn: string) => logicalIdAt(bedrock.template, 'AWS::IAM::Role', `/${fn}/Role/Resource`);
    const modelArn = {
      'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':bedrock:', { Ref: 'AWS::Region' }, '::foundation-model/anthropic.claude-3-haiku-20240307-v1:0']],
    };
    for (const fn of ['WorkerFunction', 'ReconcileFunction']) {
      expect(allows(statementsOf(bedrock.template, role(fn)), 'bedrock:InvokeModel').map((s) => s.Resource)).toEqual([[modelArn]]);
    }
    for (const fn of ['ApiFunction', 'DispatchFunction', 'DeadlineFunction']) {
      expect(allows(statementsOf(bedrock.template, role(fn)), 'bedrock:InvokeModel')).toEqual([]);
    }
  });
});
