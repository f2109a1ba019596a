import { beforeAll, describe, expect, it } from 'vitest';
import { TemplateResolutionError, UnsupportedFeatureError } from '../../lib/local/errors';
import { eventSourceMappingsFromTemplate } from '../../lib/local/event-source-mapping';
import { httpApiFromTemplate } from '../../lib/local/http-routes';
import { functionsFromTemplate } from '../../lib/local/lambda-runtime';
import { stateMachinesFromTemplate } from '../../lib/local/state-machines';
import { createResolver, parseTemplate, type LocalEnvironment } from '../../lib/local/template';
import type { CfnTemplate } from '../../lib/template/reader';
import { FIXTURES, synthTestStack, WORK_QUEUE } from './stack';

const environment: LocalEnvironment = {
  region: 'eu-west-1',
  queueUrl: (name) => `http://sqs.test/000000000000/${name}`,
  httpApiUrl: 'http://127.0.0.1:3999',
};

const withResources = (resources: Record<string, unknown>, extra: Record<string, unknown> = {}): CfnTemplate =>
  parseTemplate({ Resources: resources, ...extra });

const queue = { Type: 'AWS::SQS::Queue', Properties: {} };
const role = { Type: 'AWS::IAM::Role', Properties: {} };

describe('template resolution against the synthesized test stack', () => {
  let template: CfnTemplate;
  beforeAll(() => {
    template = parseTemplate(synthTestStack());
  });

  it('resolves each function environment from its own template variables', () => {
    const functions = functionsFromTemplate(createResolver(template, environment));
    const echo = functions.find((fn) => fn.logicalId === 'Echo');
    const echoTwo = functions.find((fn) => fn.logicalId === 'EchoTwo');
    expect(echo).toMatchObject({
      name: 'Echo',
      arn: 'arn:aws:lambda:eu-west-1:000000000000:function:Echo',
      entry: FIXTURES.echo,
      timeoutSeconds: 2,
      environment: { GREETING: 'hello from Echo', TABLE_NAME: 'Records', QUEUE_URL: 'http://sqs.test/000000000000/WorkQueue' },
    });
    expect(echoTwo?.environment.GREETING).toBe('hello from EchoTwo');
    expect(echoTwo?.timeoutSeconds).toBe(1);
  });

  it('derives table and queue names from logical IDs, behind the name prefix', () => {
    const resolver = createResolver(template, { ...environment, namePrefix: 'run7-' });
    expect(resolver.physical('Records').ref).toBe('run7-Records');
    expect(resolver.physical('WorkQueue')).toEqual({
      ref: 'http://sqs.test/000000000000/run7-WorkQueue',
      attributes: {
        Arn: 'arn:aws:sqs:eu-west-1:000000000000:run7-WorkQueue',
        QueueName: 'run7-WorkQueue',
        QueueUrl: 'http://sqs.test/000000000000/run7-WorkQueue',
      },
    });
  });

  it('resolves the redrive policy to the local dead-letter queue ARN', () => {
    const resolver = createResolver(template, environment);
    expect(resolver.resolve(template.Resources.WorkQueue?.Properties?.RedrivePolicy, 'RedrivePolicy')).toEqual({
      deadLetterTargetArn: 'arn:aws:sqs:eu-west-1:000000000000:WorkDlq',
      maxReceiveCount: WORK_QUEUE.maxReceiveCount,
    });
  });

  it('reads the synthesized state machine definitions and finds the callback Task', () => {
    const machines = stateMachinesFromTemplate(createResolver(template, environment));
    const flow = machines.find((machine) => machine.logicalId === 'Flow');
    expect(flow?.arn).toBe('arn:aws:states:eu-west-1:000000000000:stateMachine:Flow');
    expect([...(flow?.callbackTasks.keys() ?? [])]).toEqual(['Await']);
    const mapState = flow?.definition.States.EachItem as { ItemProcessor: { States: Record<string, { Parameters?: { FunctionName?: string } }> } };
    expect(mapState.ItemProcessor.States.Arm?.Parameters?.FunctionName).toBe('arn:aws:lambda:eu-west-1:000000000000:function:Echo');
    expect(mapState.ItemProcessor.States.Await?.Parameters?.FunctionName).toBe('arn:aws:lambda:eu-west-1:000000000000:function:Waiter');
  });

  it('reads the SQS event-source mappings with their batch settings', () => {
    const resolver = createResolver(template, environment);
    const queues = ['WorkQueue', 'ReleaseQueue'].map((id) => ({
      queueArn: resolver.physical(id).attributes.Arn as string,
      queueUrl: resolver.physical(id).ref,
    }));
    const batch = eventSourceMappingsFromTemplate(resolver, queues).find((mapping) => mapping.functionName === 'Batch');
    expect(batch).toMatchObject({
      queueUrl: 'http://sqs.test/000000000000/WorkQueue',
      batchSize: WORK_QUEUE.batchSize,
      concurrency: 2,
      reportBatchItemFailures: true,
      enabled: true,
    });
  });

  it('reads the HTTP API routes, their integration and their authorization', () => {
    const api = httpApiFromTemplate(createResolver(template, environment));
    const routes = Object.fromEntries((api?.routes ?? []).map((route) => [route.routeKey, route]));
    expect(Object.keys(routes).sort()).toEqual(['GET /admin', 'GET /health', 'GET /runs/{runId}', 'POST /runs']);
    expect(routes['GET /runs/{runId}']).toMatchObject({
      functionName: 'arn:aws:lambda:eu-west-1:000000000000:function:ApiHandler',
      auth: { type: 'JWT', identityHeader: 'authorization', scopes: [] },
    });
    expect(routes['GET /admin']?.auth).toMatchObject({ type: 'JWT', scopes: ['tessera/admin'] });
    expect(routes['GET /health']?.auth).toEqual({ type: 'NONE' });
    expect(api?.cors).toMatchObject({ AllowOrigins: ['https://app.example.com'], MaxAge: 600 });
  });
});

describe('intrinsics', () => {
  const template = withResources(
    { Work: queue, Fn: { Type: 'AWS::Lambda::Function', Properties: { FunctionName: 'dispatch' } }, Role: role },
    {
      Parameters: {
        Stage: { Type: 'String', Default: 'dev' },
        Zones: { Type: 'CommaDelimitedList', Default: 'a,b' },
        Version: { Type: 'AWS::SSM::Parameter::Value<String>', Default: '/cdk/version' },
      },
    },
  );
  const resolver = createResolver(template, { ...environment, stackName: 'tessera-test' });
  const resolve = (value: unknown): unknown => resolver.resolve(value, 'Test.value');

  it('resolves pseudo parameters', () => {
    expect(resolve(['AWS::Region', 'AWS::AccountId', 'AWS::Partition', 'AWS::URLSuffix', 'AWS::StackName'].map((name) => ({ Ref: name })))).toEqual([
      'eu-west-1',
      '000000000000',
      'aws',
      'amazonaws.com',
      'tessera-test',
    ]);
  });

  it('uses an explicit physical name over the logical ID', () => {
    expect(resolve({ Ref: 'Fn' })).toBe('dispatch');
    expect(resolve({ 'Fn::GetAtt': 'Fn.Arn' })).toBe('arn:aws:lambda:eu-west-1:000000000000:function:dispatch');
  });

  it('resolves Fn::Join, Fn::Select, Fn::Split and parameters', () => {
    expect(resolve({ 'Fn::Join': ['/', [{ Ref: 'Stage' }, { 'Fn::Select': [1, { Ref: 'Zones' }] }, 7]] })).toBe('dev/b/7');
    expect(resolve({ 'Fn::Select': ['2', { 'Fn::Split': [':', { 'Fn::GetAtt': ['Work', 'Arn'] }] }] })).toBe('sqs');
  });

  it('resolves Fn::Sub with references, attributes, variables and escaped literals', () => {
    expect(resolve({ 'Fn::Sub': '${AWS::Region}|${Work.QueueName}|${Fn}|${!Literal}' })).toBe('eu-west-1|Work|dispatch|${Literal}');
    expect(resolve({ 'Fn::Sub': ['${Name}-${Stage}', { Name: { Ref: 'Fn' } }] })).toBe('dispatch-dev');
  });

  it('rejects an unsupported intrinsic, naming the path', () => {
    const attempt = () => resolver.resolve({ A: [{ 'Fn::ImportValue': 'Shared' }] }, 'Resources.Fn.Properties.Environment');
    expect(attempt).toThrow(TemplateResolutionError);
    expect(attempt).toThrow('Resources.Fn.Properties.Environment.A.0: intrinsic Fn::ImportValue is not supported');
  });

  it('rejects references it cannot give a local value, naming the resource', () => {
    const withVpc = createResolver(withResources({ Net: { Type: 'AWS::EC2::VPC', Properties: { CidrBlock: '10.0.0.0/16' } } }), environment);
    expect(() => withVpc.resolve({ Ref: 'Net' }, 'x')).toThrow('Net is a AWS::EC2::VPC, which the local cloud does not emulate');
    // Identity-only resources (a role, a log group) resolve to an ARN and nothing more.
    expect(resolve({ 'Fn::GetAtt': ['Role', 'Arn'] })).toBe('arn:aws:iam::000000000000:role/Role');
    expect(() => resolve({ Ref: 'Missing' })).toThrow('no resource or parameter named Missing');
    expect(() => resolve({ 'Fn::GetAtt': ['Work', 'Nope'] })).toThrow('Fn::GetAtt Work.Nope is not emulated (emulated attributes: Arn, QueueName, QueueUrl)');
    expect(() => resolve({ Ref: 'Version' })).toThrow('parameter Version is read from SSM in AWS');
    expect(() => resolve({ 'Fn::Select': [5, ['a']] })).toThrow('Fn::Select index 5 is outside ["a"]');
  });

  it('accepts explicit values for parameters', () => {
    const overridden = createResolver(template, { ...environment, parameters: { Version: '21' } });
    expect(overridden.resolve({ Ref: 'Version' }, 'x')).toBe('21');
  });
});

describe('features the local cloud refuses at start', () => {
  it('refuses an emulated resource with a Condition', () => {
    const resolver = createResolver(withResources({ Work: { ...queue, Condition: 'IsProd' } }), environment);
    expect(() => resolver.entries('AWS::SQS::Queue')).toThrow(UnsupportedFeatureError);
  });

  it('refuses a state machine Task that would reach a real AWS service', () => {
    const definition = {
      StartAt: 'Put',
      States: { Put: { Type: 'Task', Resource: 'arn:aws:states:::dynamodb:putItem', Parameters: { TableName: 't' }, End: true } },
    };
    const resolver = createResolver(
      withResources({ Machine: { Type: 'AWS::StepFunctions::StateMachine', Properties: { DefinitionString: JSON.stringify(definition) } } }),
      environment,
    );
    expect(() => stateMachinesFromTemplate(resolver)).toThrow('Task resource arn:aws:states:::dynamodb:putItem');
  });

  it('answers startExecution.sync:2 itself only with an explicit TimeoutSeconds, and no other way of starting an execution', () => {
    const machineWith = (task: Record<string, unknown>) =>
      createResolver(
        withResources({
          Machine: {
            Type: 'AWS::StepFunctions::StateMachine',
            Properties: {
              DefinitionString: JSON.stringify({
                StartAt: 'Start',
                States: {
                  Start: { Type: 'Task', Parameters: { StateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:child' }, End: true, ...task },
                },
              }),
            },
          },
        }),
        environment,
      );
    const [machine] = stateMachinesFromTemplate(machineWith({ Resource: 'arn:aws:states:::states:startExecution.sync:2', TimeoutSeconds: 1800 }));
    expect([...(machine?.startExecutionTasks.keys() ?? [])]).toEqual(['Start']);
    // The local interpreter's Task default is 60 s; a child may run a whole deadline.
    expect(() => stateMachinesFromTemplate(machineWith({ Resource: 'arn:aws:states:::states:startExecution.sync:2' }))).toThrow(
      'without an explicit TimeoutSeconds',
    );
    expect(() => stateMachinesFromTemplate(machineWith({ Resource: 'arn:aws:states:::states:startExecution', TimeoutSeconds: 60 }))).toThrow(
      'Task resource arn:aws:states:::states:startExecution ',
    );
  });

  it('refuses an event-source mapping property it would otherwise ignore', () => {
    const template = withResources({
      Work: queue,
      Mapping: {
        Type: 'AWS::Lambda::EventSourceMapping',
        Properties: { EventSourceArn: { 'Fn::GetAtt': ['Work', 'Arn'] }, FunctionName: 'f', FilterCriteria: { Filters: [] } },
      },
    });
    const resolver = createResolver(template, environment);
    expect(() => eventSourceMappingsFromTemplate(resolver, [])).toThrow(
      'Resources.Mapping.Properties.FilterCriteria uses AWS::Lambda::EventSourceMapping property FilterCriteria',
    );
  });

  it('refuses a function with a non-Node.js runtime', () => {
    const fn = { Type: 'AWS::Lambda::Function', Metadata: { 'tessera:handler': 'functions/x.py' }, Properties: { Runtime: 'python3.12' } };
    expect(() => functionsFromTemplate(createResolver(withResources({ Fn: fn }), environment))).toThrow('runtime python3.12');
  });
});
