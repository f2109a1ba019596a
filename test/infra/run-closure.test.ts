import { beforeAll, describe, expect, test } from 'vitest';
import { EXECUTION_STATUS_CHANGE, UNFINISHED_EXECUTION_STATUSES } from '../../lib/orchestration/execution-events';
import { createEvaluator } from '../../lib/template/reader';
import { logicalIdAt, synthTesseraStack, type Synthesized } from './synth';

/**
 * The rule that closes the run of an execution that ended without recording it: what it matches,
 * where it delivers, with what retry and dead-letter queue, and the permissions that makes.
 */
let synth: Synthesized;
let reconcileArn: { 'Fn::GetAtt': [string, 'Arn'] };
let dlqArn: { 'Fn::GetAtt': [string, 'Arn'] };
let ruleId: string;
let stateMachine: { Ref: string };

beforeAll(() => {
  synth = synthTesseraStack();
  reconcileArn = { 'Fn::GetAtt': [logicalIdAt(synth.template, 'AWS::Lambda::Function', '/ReconcileFunction/Function/Resource'), 'Arn'] };
  dlqArn = { 'Fn::GetAtt': [logicalIdAt(synth.template, 'AWS::SQS::Queue', '/RunClosure/DeadLetter/Resource'), 'Arn'] };
  ruleId = logicalIdAt(synth.template, 'AWS::Events::Rule', '/RunClosure/ExecutionEnded/Resource');
  stateMachine = { Ref: logicalIdAt(synth.template, 'AWS::StepFunctions::StateMachine', '/Runs/StateMachine/Resource') };
});

const rule = () => synth.template.toJSON().Resources[ruleId].Properties;

describe('run closure rule', () => {
  test("matches only this state machine's executions that ended FAILED, TIMED_OUT or ABORTED", () => {
    expect(rule().EventPattern).toEqual({
      source: ['aws.states'],
      'detail-type': ['Step Functions Execution Status Change'],
      detail: { stateMachineArn: [stateMachine], status: ['FAILED', 'TIMED_OUT', 'ABORTED'] },
    });
    // The handler and the local cloud read the same names.
    expect([EXECUTION_STATUS_CHANGE.source, EXECUTION_STATUS_CHANGE.detailType, ...UNFINISHED_EXECUTION_STATUSES]).toEqual([
      'aws.states',
      'Step Functions Execution Status Change',
      'FAILED',
      'TIMED_OUT',
      'ABORTED',
    ]);
    expect(rule().State).toBe('ENABLED');
    expect(rule().EventBusName).toBeUndefined();
  });

  test('delivers the whole event to the reconcile function, retrying for a day, then to its own dead-letter queue', () => {
    expect(rule().Targets).toEqual([
      {
        Id: expect.any(String),
        Arn: reconcileArn,
        RetryPolicy: { MaximumRetryAttempts: 185, MaximumEventAgeInSeconds: 86_400 },
        DeadLetterConfig: { Arn: dlqArn },
      },
    ]);
  });

  test('a closing that fails in the function is retried twice by Lambda, then sent to the same dead-letter queue', () => {
    synth.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: reconcileArn['Fn::GetAtt'][0] },
      Qualifier: '$LATEST',
      MaximumRetryAttempts: 2,
      MaximumEventAgeInSeconds: 21_600,
      DestinationConfig: { OnFailure: { Destination: dlqArn } },
    });
    synth.template.resourceCountIs('AWS::Lambda::EventInvokeConfig', 1);
  });

  test('the dead-letter queue is encrypted, refuses plain HTTP, and keeps messages 14 days', () => {
    synth.template.hasResource('AWS::SQS::Queue', {
      Properties: { SqsManagedSseEnabled: true, MessageRetentionPeriod: 1_209_600 },
      Metadata: { 'aws:cdk:path': 'Tessera/FanOut/RunClosure/DeadLetter/Resource' },
    });
  });
});

describe('run closure permissions', () => {
  test('only this rule may invoke the reconcile function through EventBridge', () => {
    const permissions = Object.values(synth.template.findResources('AWS::Lambda::Permission')).filter((p) => p.Properties.Principal === 'events.amazonaws.com');
    expect(permissions.map((p) => p.Properties)).toEqual([
      { Action: 'lambda:InvokeFunction', FunctionName: reconcileArn, Principal: 'events.amazonaws.com', SourceArn: { 'Fn::GetAtt': [ruleId, 'Arn'] } },
    ]);
  });

  test('only this rule may send to the dead-letter queue, over TLS', () => {
    const [policy] = Object.values(synth.template.findResources('AWS::SQS::QueuePolicy')).filter((p) =>
      JSON.stringify(p.Properties.Queues).includes(dlqArn['Fn::GetAtt'][0]),
    );
    const statements = policy?.Properties.PolicyDocument.Statement as { Effect: string; Principal: unknown; Action: unknown; Condition: unknown }[];
    expect(statements.filter((s) => s.Effect === 'Allow')).toEqual([
      expect.objectContaining({
        Principal: { Service: 'events.amazonaws.com' },
        Action: 'sqs:SendMessage',
        Condition: { ArnEquals: { 'aws:SourceArn': { 'Fn::GetAtt': [ruleId, 'Arn'] } } },
      }),
    ]);
    expect(statements.filter((s) => s.Effect === 'Deny')).toEqual([expect.objectContaining({ Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]);
  });

  test('the reconcile role may send to that queue (its on-failure destination) and to no other queue', () => {
    const roleId = logicalIdAt(synth.template, 'AWS::IAM::Role', '/ReconcileFunction/Role/Resource');
    const statements = Object.values(synth.template.findResources('AWS::IAM::Policy'))
      .filter((p) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[]);
    const sqs = statements.filter((s) => [s.Action].flat().some((a) => a.startsWith('sqs:')));
    expect(sqs.map((s) => ({ actions: [s.Action].flat().sort(), resource: s.Resource }))).toEqual([
      { actions: ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'], resource: dlqArn },
    ]);
  });
});

describe('run closure alarms', () => {
  const alarm = (name: string) =>
    Object.values(synth.template.findResources('AWS::CloudWatch::Alarm')).find((a) => String(a.Metadata?.['aws:cdk:path']).includes(`/Monitoring/${name}/`))
      ?.Properties;

  test('ExecutionsUnfinished counts failed and timed-out executions of both machines from Step Functions, and aborts not made by a cancel from reconcile', () => {
    const properties = alarm('ExecutionsUnfinished');
    const metrics = properties.Metrics as {
      Id: string;
      Expression?: string;
      MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions: unknown } };
    }[];
    expect(metrics.find((m) => m.Expression)?.Expression).toBe(
      'FILL(failed, 0) + FILL(timedOut, 0) + FILL(aborted, 0) + FILL(batchFailed, 0) + FILL(batchTimedOut, 0)',
    );
    const stats = Object.fromEntries(metrics.filter((m) => m.MetricStat).map((m) => [m.Id, [m.MetricStat?.Metric.Namespace, m.MetricStat?.Metric.MetricName]]));
    expect(stats).toEqual({
      failed: ['AWS/States', 'ExecutionsFailed'],
      timedOut: ['AWS/States', 'ExecutionsTimedOut'],
      // A cancel stops its run's execution: only the closer knows whether an abort was one.
      aborted: ['Tessera', 'RunsClosedOnExecutionEnd'],
      batchFailed: ['AWS/States', 'ExecutionsFailed'],
      batchTimedOut: ['AWS/States', 'ExecutionsTimedOut'],
    });
    const batchMachine = { Ref: logicalIdAt(synth.template, 'AWS::StepFunctions::StateMachine', '/Runs/BatchStateMachine/Resource') };
    for (const m of metrics.filter((m) => m.MetricStat && m.Id !== 'aborted')) {
      expect(m.MetricStat?.Metric.Dimensions).toEqual([{ Name: 'StateMachineArn', Value: m.Id.startsWith('batch') ? batchMachine : stateMachine }]);
    }
    expect(metrics.find((m) => m.Id === 'aborted')?.MetricStat?.Metric.Dimensions).toEqual([
      { Name: 'executionStatus', Value: 'ABORTED' },
      { Name: 'service', Value: 'tessera' },
    ]);
    expect(properties.Threshold).toBe(0);
  });

  test('a FAILED execution always means a fault: the only path into a Fail state goes through Finalize', () => {
    const fails = Object.entries(synth.asl.States)
      .filter(([, s]) => s.Type === 'Fail')
      .map(([name]) => name)
      .sort();
    expect(fails).toEqual(['FinalizeFailed', 'RunFailed']);
    const into = (target: string) =>
      Object.entries(synth.asl.States)
        .filter(
          ([, s]) =>
            s.Next === target || (s.Catch ?? []).some((c) => c.Next === target) || (s.Choices ?? []).some((c) => c.Next === target) || s.Default === target,
        )
        .map(([name]) => name);
    expect(into('RunFailed')).toEqual(['Finalize']);
    expect(into('FinalizeFailed')).toEqual(['Finalize']);
  });

  test('RunClosureFailed alarms on any message in the run-closure dead-letter queue', () => {
    expect(alarm('RunClosureFailed')).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [dlqArn['Fn::GetAtt'][0], 'QueueName'] } }],
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
    });
  });
});

describe('run closure dashboard', () => {
  test('the Executions widget graphs every way an execution ends: succeeded, failed, timed out and aborted', () => {
    const [dashboard] = Object.values(synth.template.findResources('AWS::CloudWatch::Dashboard'));
    const { resolveString } = createEvaluator({
      ref: (name) => `<${name}>`,
      attribute: (id, attribute) => `<${id}.${attribute}>`,
      error: (path, detail) => new Error(`${path}: ${detail}`),
      unsupported: (name) => new Error(name),
    });
    const body = JSON.parse(resolveString(dashboard?.Properties.DashboardBody, 'DashboardBody')) as {
      widgets: { properties: { title?: string; metrics?: unknown[][] } }[];
    };
    const executions = body.widgets.find((widget) => widget.properties.title === 'Executions');
    const names = executions?.properties.metrics?.map((metric) => `${String(metric[0])}/${String(metric[1])}`);
    expect(names).toEqual(['AWS/States/ExecutionsSucceeded', 'AWS/States/ExecutionsFailed', 'AWS/States/ExecutionsTimedOut', 'AWS/States/ExecutionsAborted']);
  });
});
