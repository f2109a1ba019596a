import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { renderIntrinsicString } from '../../lib/infra/asl';
import { STACK_OUTPUTS } from '../../lib/infra/stack-outputs';
import { functionHandlers } from '../../lib/infra/synthesized';
import { PACKAGE_ROOT } from '../../lib/infra/tessera-function';
import { referenceRegistry } from '../../examples/app';
import { logicalIdAt, synthTesseraStack, type Synthesized } from './synth';
import { ENV } from '../../lib/runtime/environment';
import { ledgerTableDefinition, RUN_LIST_INDEX } from '../../lib/ledger/table';
import { RUN_ROUTES } from '../../lib/infra/runs-api';
import { MODEL_ENV } from '../../lib/workers/models/config';

// The stack runs the example app's worker module: a queue per kind of its registry, in its order.
const KINDS = referenceRegistry.kinds();

let synth: Synthesized;
beforeAll(() => {
  synth = synthTesseraStack();
});

const queueId = (kind: string) => logicalIdAt(synth.template, 'AWS::SQS::Queue', `/Queues/${kind}/Resource`);
const dlqId = () => logicalIdAt(synth.template, 'AWS::SQS::Queue', '/Queues/DeadLetter/Resource');
const functionId = (name: string) => logicalIdAt(synth.template, 'AWS::Lambda::Function', `/${name}/Function/Resource`);

describe('ledger table', () => {
  test('has the ledger keys, TTL, on-demand billing, PITR, SSE and deletion protection', () => {
    synth.template.hasResource('AWS::DynamoDB::Table', {
      Properties: {
        TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true },
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
        DeletionProtectionEnabled: true,
      },
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
  });

  test('has exactly the keys and the run-list index of the table DynamoDB Local creates (one definition, two sides)', () => {
    const tables = synth.template.findResources('AWS::DynamoDB::Table');
    expect(Object.keys(tables)).toHaveLength(1);
    const deployed = Object.values(tables)[0]!.Properties;
    const local = ledgerTableDefinition('any');
    expect(deployed.KeySchema).toEqual(local.KeySchema);
    expect(deployed.KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
    expect(deployed.AttributeDefinitions).toEqual(local.AttributeDefinitions);
    // GET /runs reads one tenant's runs, newest first, from this index: never a scan.
    expect(deployed.GlobalSecondaryIndexes).toEqual(local.GlobalSecondaryIndexes);
    expect(deployed.GlobalSecondaryIndexes.map((index: { IndexName: string }) => index.IndexName)).toEqual([RUN_LIST_INDEX.indexName]);
  });
});

describe('subtask queues', () => {
  test('every kind queue redrives to the shared DLQ after 3 receives, SSE on, 720 s visibility (6 × 120 s worker timeout + no batching window)', () => {
    for (const kind of KINDS) {
      expect(synth.template.toJSON().Resources[queueId(kind)].Properties).toEqual({
        RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [dlqId(), 'Arn'] }, maxReceiveCount: 3 },
        SqsManagedSseEnabled: true,
        VisibilityTimeout: 720,
        MessageRetentionPeriod: 86_400,
      });
    }
  });

  test('the DLQ keeps messages 14 days and is itself encrypted', () => {
    expect(synth.template.toJSON().Resources[dlqId()].Properties).toEqual({
      MessageRetentionPeriod: 1_209_600,
      SqsManagedSseEnabled: true,
    });
  });

  test('every queue, DLQ included, denies requests without TLS', () => {
    for (const id of [...KINDS.map(queueId), dlqId()]) {
      synth.template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: id }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Deny',
              Action: 'sqs:*',
              Principal: { AWS: '*' },
              Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            }),
          ]),
        },
      });
    }
  });
});

describe('worker event sources', () => {
  test('one per kind: batches of 5, no batching window (invoked as messages arrive), partial batch responses, concurrency 5 (scout-crm 2)', () => {
    for (const kind of KINDS) {
      synth.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        EventSourceArn: { 'Fn::GetAtt': [queueId(kind), 'Arn'] },
        FunctionName: { Ref: functionId('WorkerFunction') },
        BatchSize: 5,
        MaximumBatchingWindowInSeconds: 0,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ScalingConfig: { MaximumConcurrency: kind === 'scout-crm' ? 2 : 5 },
      });
    }
  });
});

describe('functions', () => {
  const HANDLERS = {
    ApiFunction: 'functions/api.ts',
    DispatchFunction: 'functions/dispatch.ts',
    DeadlineFunction: 'functions/deadline.ts',
    WorkerFunction: 'functions/worker.ts',
    ReconcileFunction: 'functions/reconcile.ts',
  };

  test('each carries tessera:handler metadata naming an existing entry file', () => {
    for (const [name, entry] of Object.entries(HANDLERS)) {
      const resource = synth.template.toJSON().Resources[functionId(name)];
      expect(resource.Metadata['tessera:handler']).toBe(entry);
      expect(existsSync(join(PACKAGE_ROOT, entry))).toBe(true);
    }
  });

  test('functionHandlers maps every function of the template to its entry, as the local cloud reads it', () => {
    expect(functionHandlers(synth.template.toJSON())).toEqual(Object.fromEntries(Object.entries(HANDLERS).map(([name, entry]) => [functionId(name), entry])));
  });

  test('each runs Node 24 on arm64 with active tracing, ESM handler and its own log group', () => {
    for (const name of Object.keys(HANDLERS)) {
      synth.template.hasResourceProperties('AWS::Lambda::Function', {
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        TracingConfig: { Mode: 'Active' },
        LoggingConfig: { LogGroup: { Ref: logicalIdAt(synth.template, 'AWS::Logs::LogGroup', `/${name}/Logs/Resource`) } },
        Environment: {
          Variables: Match.objectLike({
            POWERTOOLS_SERVICE_NAME: 'tessera',
            POWERTOOLS_METRICS_NAMESPACE: 'Tessera',
            NODE_OPTIONS: '--enable-source-maps',
          }),
        },
      });
    }
  });

  test('every log group keeps one month (30 days)', () => {
    const groups = Object.values(synth.template.findResources('AWS::Logs::LogGroup'));
    // five functions, the state machine, the API access log
    expect(groups.map((g) => g.Properties.RetentionInDays)).toEqual([30, 30, 30, 30, 30, 30, 30]);
  });

  test('the worker gets its lease, receive limit, allowance and model from the props', () => {
    const env = synth.template.toJSON().Resources[functionId('WorkerFunction')].Properties.Environment.Variables;
    expect(env).toMatchObject({
      [ENV.leaseSeconds]: '120',
      [ENV.maxReceiveCount]: '3',
      [ENV.tenantDailyModelCalls]: '2000',
      [ENV.tenantDailyCostLimit]: '200000',
      [MODEL_ENV.provider]: 'offline',
    });
    expect(synth.template.toJSON().Resources[functionId('WorkerFunction')].Properties.Timeout).toBe(120);
  });

  test('dispatch gets QUEUE_URLS: every kind mapped to its own queue URL', () => {
    const env = synth.template.toJSON().Resources[functionId('DispatchFunction')].Properties.Environment.Variables;
    const urls = z.record(z.string(), z.string()).parse(JSON.parse(renderIntrinsicString(env[ENV.queueUrls])));
    expect(urls).toEqual(Object.fromEntries(KINDS.map((kind) => [kind, `\${${queueId(kind)}}`])));
    expect(env[ENV.maxDeadlineSeconds]).toBe('900');
  });

  test("the api knows its state machine, tenant claim, horizon, deployed kinds and the workers' model", () => {
    const env = synth.template.toJSON().Resources[functionId('ApiFunction')].Properties.Environment.Variables;
    expect(env).toMatchObject({
      [MODEL_ENV.provider]: 'offline',
      [ENV.stateMachineArn]: { Ref: logicalIdAt(synth.template, 'AWS::StepFunctions::StateMachine', '/Runs/StateMachine/Resource') },
      [ENV.tenantClaim]: 'custom:tenant',
      [ENV.maxDeadlineSeconds]: '900',
      [ENV.workerKinds]: JSON.stringify(KINDS),
      [ENV.tableName]: { Ref: logicalIdAt(synth.template, 'AWS::DynamoDB::Table', '/Ledger/Resource') },
    });
  });

  test("the api's WORKER_CAPACITY is, per kind, what its event source mapping runs at once: MaximumConcurrency × BatchSize", () => {
    const env = synth.template.toJSON().Resources[functionId('ApiFunction')].Properties.Environment.Variables;
    const mappings = Object.values(synth.template.findResources('AWS::Lambda::EventSourceMapping')) as {
      Properties: { EventSourceArn: { 'Fn::GetAtt': [string, string] }; BatchSize: number; ScalingConfig: { MaximumConcurrency: number } };
    }[];
    const kindOfQueue = new Map(KINDS.map((kind) => [queueId(kind), kind]));
    const fromMappings = Object.fromEntries(
      mappings.map((m) => [
        kindOfQueue.get(m.Properties.EventSourceArn['Fn::GetAtt'][0]),
        m.Properties.ScalingConfig.MaximumConcurrency * m.Properties.BatchSize,
      ]),
    );
    expect(Object.keys(fromMappings).sort()).toEqual([...KINDS].sort());
    expect(JSON.parse(env[ENV.workerCapacity])).toEqual(fromMappings);
  });
});

describe('HTTP API', () => {
  test('every route uses the JWT authorizer', () => {
    const authorizer = logicalIdAt(synth.template, 'AWS::ApiGatewayV2::Authorizer', '/HttpApi/Jwt/Resource');
    const routeKeys = RUN_ROUTES.map((route) => `${route.method} ${route.path}`);
    expect(routeKeys).toEqual([
      'POST /runs',
      'GET /runs',
      'GET /runs/{runId}',
      'GET /runs/{runId}/subtasks',
      'POST /runs/{runId}/cancel',
      'POST /mcp',
      'GET /mcp',
    ]);
    for (const routeKey of routeKeys) {
      synth.template.hasResourceProperties('AWS::ApiGatewayV2::Route', {
        RouteKey: routeKey,
        AuthorizationType: 'JWT',
        AuthorizerId: { Ref: authorizer },
      });
    }
    const routes = Object.values(synth.template.findResources('AWS::ApiGatewayV2::Route'));
    expect(routes.map((r) => r.Properties.AuthorizationType)).toEqual(routeKeys.map(() => 'JWT'));
  });

  test('the authorizer trusts the stack user pool and its client as audience', () => {
    synth.template.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
      AuthorizerType: 'JWT',
      IdentitySource: ['$request.header.Authorization'],
      JwtConfiguration: {
        Audience: [{ Ref: logicalIdAt(synth.template, 'AWS::Cognito::UserPoolClient', '/Users/ApiClient/Resource') }],
        Issuer: {
          'Fn::Join': [
            '',
            [
              'https://cognito-idp.',
              { Ref: 'AWS::Region' },
              '.amazonaws.com/',
              { Ref: logicalIdAt(synth.template, 'AWS::Cognito::UserPool', '/Users/Resource') },
            ],
          ],
        },
      },
    });
  });

  test('routes integrate with the api function using payload format 2.0', () => {
    synth.template.hasResourceProperties('AWS::ApiGatewayV2::Integration', {
      IntegrationType: 'AWS_PROXY',
      IntegrationUri: { 'Fn::GetAtt': [functionId('ApiFunction'), 'Arn'] },
      PayloadFormatVersion: '2.0',
    });
  });

  test('has no CORS by default', () => {
    const [api] = Object.values(synth.template.findResources('AWS::ApiGatewayV2::Api'));
    expect(api?.Properties.CorsConfiguration).toBeUndefined();
  });

  test('the $default stage throttles at 20 rps / 40 burst and writes JSON access logs', () => {
    const stage = Object.values(synth.template.findResources('AWS::ApiGatewayV2::Stage'))[0]?.Properties;
    expect(stage.StageName).toBe('$default');
    expect(stage.DefaultRouteSettings).toEqual({ DetailedMetricsEnabled: true, ThrottlingBurstLimit: 40, ThrottlingRateLimit: 20 });
    expect(stage.AccessLogSettings.DestinationArn).toEqual({
      'Fn::GetAtt': [logicalIdAt(synth.template, 'AWS::Logs::LogGroup', '/Api/AccessLogs/Resource'), 'Arn'],
    });
    const format = z.record(z.string(), z.string()).parse(JSON.parse(stage.AccessLogSettings.Format));
    expect(format).toMatchObject({ requestId: '$context.requestId', routeKey: '$context.routeKey', status: '$context.status' });
  });
});

describe('Cognito', () => {
  test('the pool has an immutable tenant attribute and no self sign-up', () => {
    synth.template.hasResourceProperties('AWS::Cognito::UserPool', {
      AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
      Schema: [{ Name: 'tenant', AttributeDataType: 'String', Mutable: false, StringAttributeConstraints: { MinLength: '1', MaxLength: '64' } }],
    });
  });

  test('the client is public and allows admin password auth for the deploy guide', () => {
    synth.template.hasResourceProperties('AWS::Cognito::UserPoolClient', {
      GenerateSecret: false,
      ExplicitAuthFlows: ['ALLOW_ADMIN_USER_PASSWORD_AUTH', 'ALLOW_USER_SRP_AUTH', 'ALLOW_REFRESH_TOKEN_AUTH'],
    });
  });
});

describe('outputs', () => {
  test('name everything a caller and an operator need', () => {
    expect(Object.keys(synth.template.toJSON().Outputs).sort()).toEqual(Object.values(STACK_OUTPUTS).sort());
    synth.template.hasOutput(STACK_OUTPUTS.deadLetterQueueUrl, { Value: { Ref: dlqId() } });
    // A JSON object of kind → queue URL, rendered by CloudFormation at deploy time.
    const queueUrls = JSON.stringify(synth.template.toJSON().Outputs[STACK_OUTPUTS.subtaskQueueUrls].Value);
    expect(queueUrls).toContain('"{\\"tax-statements\\":\\""');
    expect(queueUrls).toContain('catering-quote');
  });
});

describe('alarms', () => {
  test('DLQ depth alarms on any visible message', () => {
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [dlqId(), 'QueueName'] } }],
      Statistic: 'Maximum',
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 0,
    });
  });

  test('degraded-run rate divides RunsDegraded by RunsFinished over every finished status, alarming above 5%', () => {
    const alarm = Object.values(synth.template.findResources('AWS::CloudWatch::Alarm')).find((a) =>
      JSON.stringify(a.Properties.Metrics ?? []).includes('RunsDegraded'),
    )?.Properties;
    expect(alarm.Threshold).toBe(0.05);
    const stats = alarm.Metrics.filter((m: { MetricStat?: unknown }) => m.MetricStat).map(
      (m: { Id: string; MetricStat: { Metric: { MetricName: string; Namespace: string; Dimensions: unknown } } }) => [
        m.Id,
        m.MetricStat.Metric.Namespace,
        m.MetricStat.Metric.MetricName,
        m.MetricStat.Metric.Dimensions,
      ],
    );
    expect(stats).toEqual([
      ['degraded', 'Tessera', 'RunsDegraded', [{ Name: 'service', Value: 'tessera' }]],
      [
        'f_succeeded',
        'Tessera',
        'RunsFinished',
        [
          { Name: 'service', Value: 'tessera' },
          { Name: 'status', Value: 'succeeded' },
        ],
      ],
      [
        'f_failed',
        'Tessera',
        'RunsFinished',
        [
          { Name: 'service', Value: 'tessera' },
          { Name: 'status', Value: 'failed' },
        ],
      ],
      [
        'f_cancelled',
        'Tessera',
        'RunsFinished',
        [
          { Name: 'service', Value: 'tessera' },
          { Name: 'status', Value: 'cancelled' },
        ],
      ],
    ]);
    const expression = alarm.Metrics.find((m: { Expression?: string }) => m.Expression).Expression;
    expect(expression).toBe(
      'IF((FILL(f_succeeded, 0) + FILL(f_failed, 0) + FILL(f_cancelled, 0)) > 0, FILL(degraded, 0) / (FILL(f_succeeded, 0) + FILL(f_failed, 0) + FILL(f_cancelled, 0)), 0)',
    );
  });
});
