import { App, CfnResource, Duration, RemovalPolicy, Stack, type CfnElement } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpJwtAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import type { Construct } from 'constructs';
import { fileURLToPath } from 'node:url';
import { HANDLER_METADATA_KEY } from '../../lib/local/lambda-runtime';

/**
 * A small real CDK stack that exercises every part of the harness: a table, a work queue with a
 * DLQ and an event-source mapping, a callback queue, functions backed by test fixtures, a state
 * machine whose Map iterations wait on task tokens, a direct-Lambda state machine and an HTTP API
 * with a JWT authorizer. Logical IDs are fixed so tests can name resources plainly.
 */

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export const FIXTURES = {
  echo: 'test/local/fixtures/echo.ts',
  callback: 'test/local/fixtures/callback.ts',
  release: 'test/local/fixtures/release.ts',
  batch: 'test/local/fixtures/batch.ts',
  api: 'test/local/fixtures/api.ts',
} as const;

/** The work queue's settings the tests reason from. */
export const WORK_QUEUE = { visibilityTimeoutSeconds: 1, maxReceiveCount: 2, batchSize: 5 } as const;

export const named = <T extends Construct>(construct: T, logicalId: string): T => {
  (construct.node.defaultChild as CfnElement & { overrideLogicalId(id: string): void }).overrideLogicalId(logicalId);
  return construct;
};

export const localFunction = (scope: Construct, id: string, entry: string, props: { timeout: number; environment?: Record<string, string> }) => {
  const fn = new NodejsFunction(scope, id, {
    entry: fileURLToPath(new URL(`../../${entry}`, import.meta.url)),
    depsLockFilePath: fileURLToPath(new URL('../../package-lock.json', import.meta.url)),
    runtime: lambda.Runtime.NODEJS_24_X,
    timeout: Duration.seconds(props.timeout),
    ...(props.environment ? { environment: props.environment } : {}),
  });
  (fn.node.defaultChild as CfnResource).addMetadata(HANDLER_METADATA_KEY, entry);
  return named(fn, id);
};

const flowDefinition = (scope: Construct, echo: lambda.IFunction, await_: lambda.IFunction): sfn.IChainable => {
  // Arm puts timeoutSeconds at $.Payload.timeoutSeconds of Await's *raw* input, and Await's
  // Parameters repeat it at the same path of its *effective* input, so TimeoutSecondsPath means
  // the same thing whichever input an engine evaluates it against.
  const arm = new tasks.LambdaInvoke(scope, 'Arm', {
    lambdaFunction: echo,
    resultSelector: {
      Payload: {
        'id.$': '$.Payload.event.id',
        'release.$': '$.Payload.event.release',
        'timeoutSeconds.$': '$.Payload.event.timeoutSeconds',
      },
    },
  });
  const wait = new tasks.LambdaInvoke(scope, 'Await', {
    lambdaFunction: await_,
    integrationPattern: sfn.IntegrationPattern.WAIT_FOR_TASK_TOKEN,
    payload: sfn.TaskInput.fromObject({
      token: sfn.JsonPath.taskToken,
      id: sfn.JsonPath.stringAt('$.Payload.id'),
      release: sfn.JsonPath.stringAt('$.Payload.release'),
      timeoutSeconds: sfn.JsonPath.numberAt('$.Payload.timeoutSeconds'),
    }),
    taskTimeout: sfn.Timeout.at('$.Payload.timeoutSeconds'),
  });
  const seal = new tasks.LambdaInvoke(scope, 'Seal', {
    lambdaFunction: echo,
    payload: sfn.TaskInput.fromObject({ sealed: 'timed_out', id: sfn.JsonPath.stringAt('$.Payload.id') }),
    resultSelector: { 'state.$': '$.Payload.event.sealed', 'id.$': '$.Payload.event.id' },
  });
  const failed = new sfn.Pass(scope, 'Failed', {
    parameters: { state: 'failed', 'id.$': '$.Payload.id', 'error.$': '$.error.Error' },
  });
  wait.addCatch(seal, { errors: [sfn.Errors.TIMEOUT], resultPath: '$.error' });
  wait.addCatch(failed, { errors: [sfn.Errors.ALL], resultPath: '$.error' });
  return new sfn.Map(scope, 'EachItem', { itemsPath: '$.items', maxConcurrency: 2 }).itemProcessor(arm.next(wait));
};

const directDefinition = (scope: Construct, echo: lambda.IFunction): sfn.IChainable => {
  const invoke = new tasks.LambdaInvoke(scope, 'Invoke', {
    lambdaFunction: echo,
    payloadResponseOnly: true,
    resultPath: '$.echo',
    retryOnServiceExceptions: false,
  });
  invoke.addCatch(new sfn.Pass(scope, 'Caught', { parameters: { 'caught.$': '$.error.Error', 'cause.$': '$.error.Cause' } }), {
    errors: ['EchoFailed'],
    resultPath: '$.error',
  });
  return invoke;
};

const addApi = (stack: Stack, handler: lambda.IFunction): void => {
  const api = named(
    new apigw.HttpApi(stack, 'Api', {
      corsPreflight: {
        allowOrigins: ['https://app.example.com'],
        allowMethods: [apigw.CorsHttpMethod.GET, apigw.CorsHttpMethod.POST],
        allowHeaders: ['authorization', 'content-type'],
        maxAge: Duration.minutes(10),
      },
    }),
    'Api',
  );
  const integration = new HttpLambdaIntegration('ApiIntegration', handler);
  const authorizer = new HttpJwtAuthorizer('Jwt', 'https://issuer.example.com', { jwtAudience: ['tessera-api'] });
  api.addRoutes({ path: '/runs', methods: [apigw.HttpMethod.POST], integration, authorizer });
  api.addRoutes({ path: '/runs/{runId}', methods: [apigw.HttpMethod.GET], integration, authorizer });
  api.addRoutes({ path: '/admin', methods: [apigw.HttpMethod.GET], integration, authorizer, authorizationScopes: ['tessera/admin'] });
  api.addRoutes({ path: '/health', methods: [apigw.HttpMethod.GET], integration });
};

/** Synthesizes the test stack with bundling disabled; returns the template as CloudFormation JSON. */
export const synthTestStack = (): unknown => {
  // The built-in CloudFormation validation costs most of the synthesis time; this stack is never deployed.
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] }, builtinCloudFormationValidation: false });
  const stack = new Stack(app, 'HarnessTest');
  const table = named(
    new dynamodb.Table(stack, 'Records', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: 'ttl',
      removalPolicy: RemovalPolicy.DESTROY,
    }),
    'Records',
  );
  table.addGlobalSecondaryIndex({ indexName: 'byToken', partitionKey: { name: 'token', type: dynamodb.AttributeType.STRING } });
  const dlq = named(new sqs.Queue(stack, 'WorkDlq'), 'WorkDlq');
  const work = named(
    new sqs.Queue(stack, 'WorkQueue', {
      visibilityTimeout: Duration.seconds(WORK_QUEUE.visibilityTimeoutSeconds),
      deadLetterQueue: { queue: dlq, maxReceiveCount: WORK_QUEUE.maxReceiveCount },
    }),
    'WorkQueue',
  );
  const releases = named(new sqs.Queue(stack, 'ReleaseQueue', { visibilityTimeout: Duration.seconds(2) }), 'ReleaseQueue');
  const shared = { TABLE_NAME: table.tableName, QUEUE_URL: work.queueUrl };
  const echo = localFunction(stack, 'Echo', FIXTURES.echo, { timeout: 2, environment: { ...shared, GREETING: 'hello from Echo' } });
  localFunction(stack, 'EchoTwo', FIXTURES.echo, { timeout: 1, environment: { ...shared, GREETING: 'hello from EchoTwo' } });
  const awaitFn = localFunction(stack, 'Waiter', FIXTURES.callback, {
    timeout: 2,
    environment: { TABLE_NAME: table.tableName, RELEASE_QUEUE_URL: releases.queueUrl },
  });
  const release = localFunction(stack, 'Release', FIXTURES.release, { timeout: 2 });
  release.addEventSource(new SqsEventSource(releases, { batchSize: 10, reportBatchItemFailures: true }));
  const batch = localFunction(stack, 'Batch', FIXTURES.batch, { timeout: 1, environment: { TABLE_NAME: table.tableName } });
  batch.addEventSource(new SqsEventSource(work, { batchSize: WORK_QUEUE.batchSize, reportBatchItemFailures: true, maxConcurrency: 2 }));
  const api = localFunction(stack, 'ApiHandler', FIXTURES.api, { timeout: 2, environment: { API_NAME: 'harness-test' } });
  named(new sfn.StateMachine(stack, 'Flow', { definitionBody: sfn.DefinitionBody.fromChainable(flowDefinition(stack, echo, awaitFn)) }), 'Flow');
  named(new sfn.StateMachine(stack, 'Direct', { definitionBody: sfn.DefinitionBody.fromChainable(directDefinition(stack, echo)) }), 'Direct');
  addApi(stack, api);
  return app.synth().getStackByName('HarnessTest').template;
};
