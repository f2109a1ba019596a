import {
  ExecutionAlreadyExists,
  ListExecutionsCommand,
  SendTaskSuccessCommand,
  StartExecutionCommand,
  StopExecutionCommand,
  TaskDoesNotExist,
  TaskTimedOut,
  InvalidToken,
  type SFNClient,
} from '@aws-sdk/client-sfn';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalCloud } from '../../lib/local/cloud';
import { documentClient } from '../support/aws';
import { eventually, finishedExecution, outputOf, sfnClient, startTestCloud } from './support';

type Item = { id: string; release: 'self' | 'later' | 'never' | 'fail'; timeoutSeconds: number };

describe('local Step Functions running the synthesized definitions', () => {
  let cloud: LocalCloud;
  let sfn: SFNClient;
  const arnOf = (logicalId: string): string => cloud.resources.stateMachines.find((machine) => machine.logicalId === logicalId)?.arn as string;
  const start = (logicalId: string, input: unknown, name?: string) =>
    sfn.send(new StartExecutionCommand({ stateMachineArn: arnOf(logicalId), input: JSON.stringify(input), ...(name ? { name } : {}) }));
  const runDirect = async (n: number) => outputOf(await finishedExecution(sfn, (await start('Direct', { n })).executionArn as string));
  const runFlow = async (items: Item[], name?: string) => finishedExecution(sfn, (await start('Flow', { items }, name)).executionArn as string);
  const recordedToken = async (id: string): Promise<string> => {
    const tableName = cloud.resources.tables[0]?.tableName as string;
    const item = await documentClient().send(new GetCommand({ TableName: tableName, Key: { pk: 'token', sk: id } }));
    return item.Item?.token as string;
  };

  beforeAll(async () => {
    cloud = await startTestCloud();
    sfn = sfnClient(cloud);
  });
  afterAll(() => cloud?.stop());

  it('releases a Map iteration by SendTaskSuccess from its Lambda, seals one at its TimeoutSecondsPath, and catches one whose Lambda fails', async () => {
    const described = await runFlow([
      { id: 'a', release: 'self', timeoutSeconds: 30 },
      { id: 'b', release: 'never', timeoutSeconds: 1 },
      { id: 'c', release: 'fail', timeoutSeconds: 30 },
    ]);
    expect(described.status).toBe('SUCCEEDED');
    expect(outputOf(described)).toEqual([
      { state: 'ok', id: 'a', releasedBy: 'self' },
      { state: 'timed_out', id: 'b' },
      { state: 'failed', id: 'c', error: 'CallbackSetupFailed' },
    ]);
  });

  it('answers TaskTimedOut to a result for a Task that already timed out', async () => {
    await runFlow([{ id: 'late', release: 'never', timeoutSeconds: 1 }]);
    const token = await recordedToken('late');
    await expect(sfn.send(new SendTaskSuccessCommand({ taskToken: token, output: '{"state":"ok"}' }))).rejects.toBeInstanceOf(TaskTimedOut);
  });

  it('tells an unknown task token from a malformed one', async () => {
    await expect(sfn.send(new SendTaskSuccessCommand({ taskToken: 'tessera-local-never-issued', output: '{}' }))).rejects.toBeInstanceOf(TaskDoesNotExist);
    await expect(sfn.send(new SendTaskSuccessCommand({ taskToken: 'not-a-token', output: '{}' }))).rejects.toBeInstanceOf(InvalidToken);
  });

  it('treats the same name and input while running as the same execution, and anything else as ExecutionAlreadyExists', async () => {
    const input = { items: [{ id: 'held', release: 'never', timeoutSeconds: 2 }] };
    const first = await start('Flow', input, 'run-held');
    const again = await start('Flow', input, 'run-held');
    expect(again.executionArn).toBe(first.executionArn);
    expect(first.executionArn).toBe(`${arnOf('Flow').replace(':stateMachine:', ':execution:')}:run-held`);
    await expect(start('Flow', { items: [] }, 'run-held')).rejects.toBeInstanceOf(ExecutionAlreadyExists);
    await finishedExecution(sfn, first.executionArn as string);
    await expect(start('Flow', input, 'run-held')).rejects.toBeInstanceOf(ExecutionAlreadyExists);
  });

  it('stops an execution: ABORTED with the given error, and its waiting token closed', async () => {
    const { executionArn } = await start('Flow', { items: [{ id: 'stopped', release: 'never', timeoutSeconds: 60 }] });
    const token = await eventually('the Waiter to record its token', async () => (await recordedToken('stopped')) || undefined);
    await sfn.send(new StopExecutionCommand({ executionArn, error: 'RunCancelled', cause: 'the caller cancelled' }));
    const described = await finishedExecution(sfn, executionArn as string);
    expect(described).toMatchObject({ status: 'ABORTED', error: 'RunCancelled', cause: 'the caller cancelled' });
    await expect(sfn.send(new SendTaskSuccessCommand({ taskToken: token, output: '{}' }))).rejects.toBeInstanceOf(TaskTimedOut);
  });

  it('runs no Task of a stopped execution: the Map iterations still queued behind its concurrency of 2 invoke nothing', async () => {
    const items: Item[] = ['q1', 'q2', 'q3', 'q4', 'q5', 'q6'].map((id) => ({ id, release: 'never', timeoutSeconds: 60 }));
    const echoed = () => cloud.lambdaStats().Echo?.invocations ?? 0;
    const before = echoed();
    const { executionArn } = await start('Flow', { items });
    // The first two iterations wait on their tokens; the other four wait for a slot.
    await eventually('both running iterations to record their tokens', async () => ((await recordedToken('q2')) && (await recordedToken('q1'))) || undefined);
    expect(echoed() - before).toBe(2);
    await sfn.send(new StopExecutionCommand({ executionArn, error: 'RunCancelled', cause: 'the caller cancelled' }));
    expect((await finishedExecution(sfn, executionArn as string)).status).toBe('ABORTED');
    await cloud.executions.settled(executionArn as string);
    // Freed slots start the four queued iterations, whose first Task (Arm, an Echo) must not run.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(echoed() - before).toBe(2);
  });

  it('runs a Task whose resource is the function ARN itself, and catches the function error by its type, its error document the cause', async () => {
    const plain = await finishedExecution(sfn, (await start('Direct', { n: 1 })).executionArn as string);
    expect(outputOf(plain)).toMatchObject({ n: 1, echo: { greeting: 'hello from Echo', event: { n: 1 } } });
    const failing = await finishedExecution(sfn, (await start('Direct', { fail: true })).executionArn as string);
    const caught = outputOf(failing) as { caught: string; cause: string };
    expect(caught.caught).toBe('EchoFailed');
    // As on AWS: the Catch reads the function's error document, as JSON, for the cause.
    expect(JSON.parse(caught.cause)).toMatchObject({ errorType: 'EchoFailed', errorMessage: 'asked to fail' });
  });

  it('runs plain Lambda Tasks on one client: a hundred executions leave no connection behind each', async () => {
    // Each Task the library ran itself built a new SDK client with a connection of its own, which
    // the Lambda endpoint keeps open: two file descriptors of this process per Task.
    const openFiles = () => readdirSync('/proc/self/fd').length;
    await runDirect(1);
    const before = openFiles();
    for (let n = 0; n < 100; n += 1) await runDirect(n);
    expect(openFiles() - before).toBeLessThan(20);
  });

  it('records the event log: one Map, then Arm and Await in the single iteration, is three state transitions', async () => {
    const described = await runFlow([{ id: 'counted', release: 'self', timeoutSeconds: 30 }]);
    const record = cloud.executions.describe(described.executionArn as string);
    expect(record.transitions).toBe(3);
    expect(record.events.filter((event) => event.type === 'StateEntered').map((event) => (event.state as { name: string }).name)).toEqual([
      'EachItem',
      'Arm',
      'Await',
    ]);
  });

  it('lists the executions of a state machine, newest first', async () => {
    const described = await runFlow([], 'run-listed');
    const listed = await sfn.send(new ListExecutionsCommand({ stateMachineArn: arnOf('Flow'), maxResults: 1 }));
    expect(listed.executions?.map((execution) => execution.executionArn)).toEqual([described.executionArn]);
    expect(listed.nextToken).toBeDefined();
  });
});
