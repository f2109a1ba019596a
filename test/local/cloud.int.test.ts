import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { StartExecutionCommand } from '@aws-sdk/client-sfn';
import { ListQueuesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startLocalCloud, type LocalCloud } from '../../lib/local/cloud';
import { HandlerLoadError } from '../../lib/local/errors';
import { HANDLER_METADATA_KEY } from '../../lib/local/lambda-runtime';
import { REPO_ROOT, synthTestStack } from './stack';
import { localCredentials, localRegion, sqsClient, uniqueName } from '../support/aws';
import { eventually, finishedExecution, outputOf, sfnClient, startTestCloud } from './support';

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('startLocalCloud with its own emulators', () => {
  let cloud: LocalCloud;
  const before = process.env.AWS_ENDPOINT_URL_LAMBDA;

  beforeAll(async () => {
    cloud = await startLocalCloud({ template: synthTestStack(), repoRoot: REPO_ROOT });
  }, 120_000);
  afterAll(() => cloud?.stop());

  it('points the AWS SDK environment at its own endpoints while it runs', () => {
    expect(process.env.AWS_ENDPOINT_URL_LAMBDA).toBe(cloud.endpoints.lambda);
    expect(process.env.AWS_ENDPOINT_URL_SFN).toBe(cloud.endpoints.stepFunctions);
    expect(process.env.AWS_ENDPOINT_URL_DYNAMODB).toBe(cloud.endpoints.dynamodb);
    expect(cloud.endpoints.sqs).toMatch(/^http:\/\/sqs\.us-east-1\.localhost:\d+$/);
    expect(cloud.resources.queues.map((queue) => queue.queueUrl)).toContain(`${cloud.endpoints.sqs}/000000000000/WorkQueue`);
  });

  it('releases a waiting Task through a queue: Waiter → SQS → event-source mapping → Release → SendTaskSuccess', async () => {
    const sfn = sfnClient(cloud);
    const flow = cloud.resources.stateMachines.find((machine) => machine.logicalId === 'Flow')?.arn;
    const { executionArn } = await sfn.send(
      new StartExecutionCommand({ stateMachineArn: flow, input: JSON.stringify({ items: [{ id: 'q', release: 'later', timeoutSeconds: 30 }] }) }),
    );
    const described = await finishedExecution(sfn, executionArn as string);
    expect(outputOf(described)).toEqual([{ state: 'ok', id: 'q', releasedBy: 'queue' }]);
    expect(cloud.lambdaStats()).toMatchObject({ Echo: { invocations: 1 }, Waiter: { invocations: 1 }, Release: { invocations: 1 } });
  });

  it('stops everything it started, leaves no process behind, restores the environment, and may be stopped twice', async () => {
    const apiUrl = cloud.apiUrl as string;
    expect(cloud.processes).toHaveLength(1);
    expect(cloud.processes.every(isRunning)).toBe(true);
    await cloud.stop();
    await cloud.stop();
    expect(cloud.processes.some(isRunning)).toBe(false);
    await expect(fetch(`${apiUrl}/health`)).rejects.toThrow();
    expect(process.env.AWS_ENDPOINT_URL_LAMBDA).toBe(before);
  });
});

describe('startLocalCloud failing to start', () => {
  it('names the function whose handler module is missing, and leaves the environment as it was', async () => {
    const template = synthTestStack() as { Resources: Record<string, { Metadata?: Record<string, unknown> }> };
    const echo = template.Resources.Echo as { Metadata: Record<string, unknown> };
    echo.Metadata[HANDLER_METADATA_KEY] = 'test/local/fixtures/missing.ts';
    const before = { ...process.env };
    const attempt = startTestCloud({ template });
    await expect(attempt).rejects.toThrow(HandlerLoadError);
    await expect(attempt).rejects.toThrow('function Echo (test/local/fixtures/missing.ts): cannot import the handler module');
    expect(process.env).toEqual(before);
  });
});

describe('startLocalCloud while DynamoDB Local boots', () => {
  it('creates the queues and loads the handlers while the JVM boots, and the tables (then the HTTP API) once it answers', { timeout: 120_000 }, async () => {
    let answer: () => void = () => undefined;
    const dynamodbReady = new Promise<void>((resolve) => (answer = resolve));
    const namePrefix = `${uniqueName('boot')}-`;
    let stopped = 0;
    const starting = startLocalCloud({
      template: synthTestStack(),
      repoRoot: REPO_ROOT,
      namePrefix,
      // The shared emulators, handed over as if this cloud had launched a JVM that is still booting.
      emulators: {
        dynamodbEndpoint: inject('dynamoEndpoint'),
        sqsEndpoint: inject('sqsEndpoint'),
        dynamodbReady,
        pids: [],
        stop: async () => void (stopped += 1),
      },
    });
    const sqs = sqsClient();
    const dynamodb = new DynamoDBClient({ endpoint: inject('dynamoEndpoint'), region: localRegion, credentials: localCredentials });
    const ours = async () => ({
      queues: ((await sqs.send(new ListQueuesCommand({ QueueNamePrefix: namePrefix }))).QueueUrls ?? []).length,
      tables: ((await dynamodb.send(new ListTablesCommand({}))).TableNames ?? []).filter((name) => name.startsWith(namePrefix)).length,
    });
    // The handlers are built once the SDK environment points at the cloud's Lambda endpoint.
    await eventually('the handlers loaded before DynamoDB Local answered', async () => (process.env.AWS_ENDPOINT_URL_LAMBDA ? true : undefined));
    expect(await ours()).toEqual({ queues: expect.any(Number), tables: 0 });
    expect((await ours()).queues).toBeGreaterThan(0);
    const early = await Promise.race([starting.then(() => 'started'), new Promise((resolve) => setTimeout(() => resolve('waiting'), 500))]);
    expect(early).toBe('waiting');

    answer();
    const cloud = await starting;
    try {
      expect((await ours()).tables).toBe(cloud.resources.tables.length);
      expect(cloud.resources.tables.length).toBeGreaterThan(0);
    } finally {
      await cloud.stop();
    }
    expect(stopped).toBe(1);
  });
});
