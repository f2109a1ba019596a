import { describe, expect, it } from 'vitest';
import { UnsupportedFeatureError } from '../../lib/local/errors';
import { eventRulesFromTemplate, matchesPattern } from '../../lib/local/event-rules';
import { createResolver, parseTemplate } from '../../lib/local/template';

const environment = { region: 'eu-west-1', queueUrl: (name: string) => `http://sqs.test/000000000000/${name}` };
const closerArn = 'arn:aws:lambda:eu-west-1:000000000000:function:Closer';
const dlqArn = 'arn:aws:sqs:eu-west-1:000000000000:Dlq';
const known = { functions: [{ name: 'Closer', arn: closerArn }], queues: [{ queueArn: dlqArn, queueUrl: 'http://sqs.test/000000000000/Dlq' }] };

const pattern = { source: ['aws.states'], detail: { status: ['FAILED', 'ABORTED'] } };

/** A rule to the Closer function, plus whatever `extra` resources and target properties say. */
const rulesOf = (options: { rulePattern?: unknown; target?: Record<string, unknown>; permission?: boolean; invokeConfig?: boolean } = {}) =>
  eventRulesFromTemplate(
    createResolver(
      parseTemplate({
        Resources: {
          Closer: { Type: 'AWS::Lambda::Function', Properties: { FunctionName: 'Closer' } },
          Dlq: { Type: 'AWS::SQS::Queue', Properties: {} },
          Rule: {
            Type: 'AWS::Events::Rule',
            Properties: {
              EventPattern: options.rulePattern ?? pattern,
              Targets: [
                { Id: 'Target0', Arn: { 'Fn::GetAtt': ['Closer', 'Arn'] }, DeadLetterConfig: { Arn: { 'Fn::GetAtt': ['Dlq', 'Arn'] } }, ...options.target },
              ],
            },
          },
          ...(options.permission === false
            ? {}
            : {
                Permission: {
                  Type: 'AWS::Lambda::Permission',
                  Properties: {
                    Action: 'lambda:InvokeFunction',
                    FunctionName: { 'Fn::GetAtt': ['Closer', 'Arn'] },
                    Principal: 'events.amazonaws.com',
                    SourceArn: { 'Fn::GetAtt': ['Rule', 'Arn'] },
                  },
                },
              }),
          ...(options.invokeConfig
            ? {
                AsyncConfig: {
                  Type: 'AWS::Lambda::EventInvokeConfig',
                  Properties: {
                    FunctionName: { Ref: 'Closer' },
                    Qualifier: '$LATEST',
                    MaximumRetryAttempts: 1,
                    DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': ['Dlq', 'Arn'] } } },
                  },
                },
              }
            : {}),
        },
      }),
      environment,
    ),
    known,
  );

describe('EventBridge rules read from the template', () => {
  it('resolves the pattern, the target function, its dead-letter queue, the permission and the async retries', () => {
    expect(rulesOf({ invokeConfig: true })).toEqual([
      {
        logicalId: 'Rule',
        arn: 'arn:aws:events:eu-west-1:000000000000:rule/Rule',
        enabled: true,
        pattern,
        targets: [
          {
            id: 'Target0',
            functionName: 'Closer',
            functionArn: closerArn,
            deadLetterQueue: { arn: dlqArn, url: 'http://sqs.test/000000000000/Dlq' },
            permitted: true,
            functionRetryAttempts: 1,
            onFailure: { arn: dlqArn, url: 'http://sqs.test/000000000000/Dlq' },
          },
        ],
      },
    ]);
  });

  it('without an AWS::Lambda::Permission for the rule the target is not permitted; without EventInvokeConfig Lambda retries twice', () => {
    expect(rulesOf({ permission: false })[0]?.targets[0]).toMatchObject({ permitted: false, functionRetryAttempts: 2, onFailure: undefined });
  });

  it('refuses what it does not emulate: content filters and input rewriting', () => {
    expect(() => rulesOf({ rulePattern: { detail: { status: [{ prefix: 'F' }] } } })).toThrow(UnsupportedFeatureError);
    expect(() => rulesOf({ target: { InputPath: '$.detail' } })).toThrow(UnsupportedFeatureError);
    expect(() => rulesOf({ target: { InputTransformer: { InputTemplate: '{}' } } })).toThrow(UnsupportedFeatureError);
  });
});

describe('matchesPattern', () => {
  const event = {
    source: 'aws.states',
    'detail-type': 'Step Functions Execution Status Change',
    resources: ['a', 'b'],
    detail: { status: 'ABORTED', name: 'r1' },
  };

  it('matches when every named field has one of the listed values', () => {
    expect(matchesPattern(pattern, event)).toBe(true);
    expect(matchesPattern({ resources: ['b'] }, event)).toBe(true);
  });

  it('does not match another value, a missing field, or a value where an object is expected', () => {
    expect(matchesPattern({ detail: { status: ['SUCCEEDED'] } }, event)).toBe(false);
    expect(matchesPattern({ detail: { error: ['States.Runtime'] } }, event)).toBe(false);
    expect(matchesPattern({ source: { nested: ['x'] } }, event)).toBe(false);
  });
});
