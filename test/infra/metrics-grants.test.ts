import { Aspects, CfnParameter, Duration, Stack, Token } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { TesseraFanOut } from '../../lib/infra/fan-out';
import { InvalidConstructProps } from '../../lib/infra/errors';
import { TesseraStack } from '../../lib/infra/stack';
import { exampleFanOut } from '../../examples/app/cdk';
import { logicalIdAt, nagFindings, unbundledApp } from './synth';

/**
 * The construct's `metric*()` and `grant*()` methods, proved on the synthesized template: an alarm
 * made from each metric reads the metric the reconcile and worker functions emit (namespace
 * `Tessera`, the `service` dimension, the metric's own dimension), and each grant gives a role
 * exactly the actions and resources named here, with cdk-nag still finding nothing.
 */

const synth = () => {
  const app = unbundledApp();
  const stack = new TesseraStack(app, 'Tessera', { fanOut: { ...exampleFanOut({ faultInjection: false }), serviceName: 'orders' } });
  return { app, stack, fanOut: stack.fanOut };
};

describe('TesseraFanOut metric*()', () => {
  it('builds each of the seven run metrics with the service dimension, its own dimension, a 5-minute sum, and props over all of it', () => {
    const { fanOut } = synth();
    const cases: [cloudwatch.Metric, string, Record<string, string>][] = [
      [fanOut.metricRunsFinished('failed'), 'RunsFinished', { service: 'orders', status: 'failed' }],
      [fanOut.metricRunsDegraded(), 'RunsDegraded', { service: 'orders' }],
      [fanOut.metricRunsDegradedByReason('timed_out'), 'RunsDegradedByReason', { service: 'orders', reason: 'timed_out' }],
      [fanOut.metricSubtasksByState('invalid'), 'SubtasksByState', { service: 'orders', state: 'invalid' }],
      [fanOut.metricGapsRechecked(), 'GapsRechecked', { service: 'orders' }],
      [fanOut.metricRunsClosedOnExecutionEnd('TIMED_OUT'), 'RunsClosedOnExecutionEnd', { service: 'orders', executionStatus: 'TIMED_OUT' }],
      [fanOut.metricLateResults(), 'LateResults', { service: 'orders' }],
    ];
    for (const [metric, name, dimensions] of cases) {
      expect({ namespace: metric.namespace, name: metric.metricName, dimensions: metric.dimensions }, name).toEqual({ namespace: 'Tessera', name, dimensions });
      expect(metric.period.toSeconds(), name).toBe(300);
      expect(metric.statistic, name).toBe('Sum');
    }
    const hourly = fanOut.metricRunsFinished('succeeded', { period: Duration.hours(1), statistic: cloudwatch.Stats.SAMPLE_COUNT, label: 'ok runs' });
    expect([hourly.period.toSeconds(), hourly.statistic, hourly.label]).toEqual([3600, 'SampleCount', 'ok runs']);
    // A dimension given in props joins the fan-out's; one of the same name replaces it.
    expect(fanOut.metric('RunsDegraded', { dimensionsMap: { service: 'other', stage: 'beta' } }).dimensions).toEqual({ service: 'other', stage: 'beta' });
  });

  it('synthesizes an alarm on a metric as CloudWatch reads it', () => {
    const { stack, fanOut } = synth();
    fanOut.metricRunsClosedOnExecutionEnd('FAILED').createAlarm(stack, 'ClosedFailed', { threshold: 0, evaluationPeriods: 1 });
    fanOut.metricLateResults({ period: Duration.minutes(15) }).createAlarm(stack, 'Late', { threshold: 10, evaluationPeriods: 2 });
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'Tessera',
      MetricName: 'RunsClosedOnExecutionEnd',
      Dimensions: [
        { Name: 'executionStatus', Value: 'FAILED' },
        { Name: 'service', Value: 'orders' },
      ],
      Statistic: 'Sum',
      Period: 300,
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'LateResults',
      Dimensions: [{ Name: 'service', Value: 'orders' }],
      Period: 900,
      EvaluationPeriods: 2,
    });
  });
});

/** The statements of the one policy attached to `role`. */
const statementsOf = (template: Template, stack: Stack, role: iam.Role): { Action: string | string[]; Resource: unknown }[] => {
  const roleId = stack.getLogicalId(role.node.defaultChild as iam.CfnRole);
  const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((policy) =>
    (policy.Properties.Roles as { Ref: string }[]).some((ref) => ref.Ref === roleId),
  );
  expect(policies).toHaveLength(1);
  return policies[0]!.Properties.PolicyDocument.Statement;
};

describe('TesseraFanOut grant*()', () => {
  const granted = () => {
    const { app, stack, fanOut } = synth();
    const operator = new iam.Role(stack, 'Operator', { assumedBy: new iam.AccountRootPrincipal() });
    fanOut.grantReadExecutions(operator);
    fanOut.grantConsumeDeadLetters(operator);
    fanOut.grantReadLedger(operator);
    return { app, stack, fanOut, operator };
  };

  it('grantReadLedger: the read actions on the ledger table and its run-list index, by name, and no write', () => {
    const { stack, operator } = granted();
    const template = Template.fromStack(stack);
    const tableArn = { 'Fn::GetAtt': [logicalIdAt(template, 'AWS::DynamoDB::Table', '/FanOut/Ledger/Resource'), 'Arn'] };
    const statements = statementsOf(template, stack, operator);
    const ledger = statements.find((s) => [s.Action].flat().includes('dynamodb:Query'))!;
    expect([ledger.Action].flat().sort()).toEqual(['dynamodb:BatchGetItem', 'dynamodb:DescribeTable', 'dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:Scan']);
    expect(ledger.Resource).toEqual([tableArn, { 'Fn::Join': ['', [tableArn, '/index/run-list']] }]);
    const actions = statements.flatMap((s) => [s.Action].flat());
    expect(actions.filter((a) => /dynamodb:(Put|Update|Delete|BatchWrite)/.test(a))).toEqual([]);
  });

  it('grantConsumeDeadLetters: receive and delete on both dead-letter queues, and send on none', () => {
    const { stack, operator } = granted();
    const template = Template.fromStack(stack);
    const statements = statementsOf(template, stack, operator);
    const consume = statements.find((s) => [s.Action].flat().includes('sqs:ReceiveMessage'))!;
    expect([consume.Action].flat()).toEqual(expect.arrayContaining(['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility']));
    const dlq = logicalIdAt(template, 'AWS::SQS::Queue', '/FanOut/Queues/DeadLetter/Resource');
    const closureDlq = logicalIdAt(template, 'AWS::SQS::Queue', '/FanOut/RunClosure/DeadLetter/Resource');
    const resources = statements.filter((s) => [s.Action].flat().includes('sqs:ReceiveMessage')).flatMap((s) => [s.Resource].flat());
    expect(resources).toEqual(expect.arrayContaining([{ 'Fn::GetAtt': [dlq, 'Arn'] }, { 'Fn::GetAtt': [closureDlq, 'Arn'] }]));
    expect(resources).toHaveLength(2);
    expect(statements.flatMap((s) => [s.Action].flat()).filter((a) => a === 'sqs:SendMessage')).toEqual([]);
  });

  it('grantReadExecutions: list and describe on both machines, describe and history on their executions, nothing that starts or stops', () => {
    const { stack, operator } = granted();
    const template = Template.fromStack(stack);
    const statements = statementsOf(template, stack, operator);
    const actions = statements.flatMap((s) => [s.Action].flat()).filter((a) => a.startsWith('states:'));
    expect(actions.sort()).toEqual(['states:DescribeExecution', 'states:DescribeStateMachine', 'states:GetExecutionHistory', 'states:ListExecutions']);
    const history = statements.find((s) => [s.Action].flat().includes('states:GetExecutionHistory'))!;
    // One execution pattern per machine: arn:…:execution:<machine name>:*
    const patterns = [history.Resource].flat().map((r) => JSON.stringify(r));
    expect(patterns).toHaveLength(2);
    for (const pattern of patterns) expect(pattern).toMatch(/:execution:".*"Fn::GetAtt":\[".*StateMachine[0-9A-F]+","Name"\]\},":\*"/);
  });

  it('leaves cdk-nag with no unsuppressed finding on a stack whose role holds every grant', () => {
    const { app, stack } = granted();
    Aspects.of(app).add(new AwsSolutionsChecks());
    Template.fromStack(stack);
    expect(nagFindings(stack)).toEqual([]);
  });
});

describe('TesseraFanOut token guards', () => {
  it('skips the checks of props it only passes on when they are unresolved tokens, and keeps the token in the template', () => {
    const app = unbundledApp();
    const stack = new Stack(app, 'Tokens');
    const issuer = new CfnParameter(stack, 'Issuer').valueAsString;
    const audience = new CfnParameter(stack, 'Audience').valueAsString;
    const origin = new CfnParameter(stack, 'Origin').valueAsString;
    const fanOut = new TesseraFanOut(stack, 'FanOut', {
      ...exampleFanOut({ faultInjection: false }),
      auth: { issuer, audiences: [audience] },
      corsAllowedOrigins: [origin],
    });
    expect(Token.isUnresolved(fanOut.settings.auth.issuer)).toBe(true);
    Template.fromStack(stack).hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
      JwtConfiguration: { Issuer: { Ref: 'Issuer' }, Audience: [{ Ref: 'Audience' }] },
    });
  });

  it('still refuses a concrete value that fails, and refuses a token for a number it computes with, naming the prop and why', () => {
    const app = unbundledApp();
    const stack = new Stack(app, 'Tokens');
    const concurrency = new CfnParameter(stack, 'Concurrency', { type: 'Number' }).valueAsNumber;
    const refused = (() => {
      try {
        new TesseraFanOut(stack, 'FanOut', {
          ...exampleFanOut({ faultInjection: false }),
          auth: { issuer: 'http://insecure.example.com', audiences: [Token.asString(new CfnParameter(stack, 'A'))] },
          mapMaxConcurrency: concurrency,
        });
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(refused).toBeInstanceOf(InvalidConstructProps);
    expect((refused as InvalidConstructProps).problems).toEqual([
      'auth.issuer: must be an https:// issuer URL',
      'mapMaxConcurrency: must be known at synth time, not an unresolved token: the construct sizes resources and limits with it',
    ]);
  });
});
