import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  ListExecutionsCommand,
  StartExecutionCommand,
  StopExecutionCommand,
  type SFNClient,
} from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalCloud } from '../../lib/local/cloud';
import { createExecutionService, DEFAULT_EXECUTION_RETENTION } from '../../lib/local/sfn-executions';
import { sfnClient, startTestCloud } from './support';

/**
 * The local Step Functions keeps a bounded number of finished executions, and the event logs of
 * fewer still (ExecutionRetention): here 3 and 1, so the arithmetic is visible. The Direct state
 * machine of the test stack is one Lambda Task, so one of its successful runs is one transition.
 */
describe('local Step Functions: finished executions are pruned', () => {
  let cloud: LocalCloud;
  let sfn: SFNClient;
  const arnOf = (logicalId: string): string => cloud.resources.stateMachines.find((machine) => machine.logicalId === logicalId)?.arn as string;
  const start = async (logicalId: string, input: unknown, name: string): Promise<string> =>
    (await sfn.send(new StartExecutionCommand({ stateMachineArn: arnOf(logicalId), input: JSON.stringify(input), name }))).executionArn as string;

  beforeAll(async () => {
    cloud = await startTestCloud({ executionRetention: { finished: 3, eventLogs: 1 } });
    sfn = sfnClient(cloud);
  });
  afterAll(() => cloud?.stop());

  it('keeps the 3 newest finished, the newest with its event log; forgets the rest; never prunes a running one', async () => {
    // Running all along: a callback the Waiter never releases, due in 60 s.
    const held = await start('Flow', { items: [{ id: 'held', release: 'never', timeoutSeconds: 60 }] }, 'held');
    const arns: string[] = [];
    for (const n of [1, 2, 3, 4, 5]) {
      const arn = await start('Direct', { n }, `direct-${n}`);
      // Settled, not only described as ended: the service prunes once an execution's last event is in.
      await cloud.executions.settled(arn);
      arns.push(arn);
    }
    const [first, second, third, fourth, fifth] = arns as [string, string, string, string, string];

    // The two oldest are forgotten, by DescribeExecution and ListExecutions alike, and their names stay taken.
    for (const arn of [first, second])
      await expect(sfn.send(new DescribeExecutionCommand({ executionArn: arn }))).rejects.toBeInstanceOf(ExecutionDoesNotExist);
    const listed = await sfn.send(new ListExecutionsCommand({ stateMachineArn: arnOf('Direct') }));
    expect(listed.executions?.map((execution) => execution.name)).toEqual(['direct-5', 'direct-4', 'direct-3']);
    await expect(start('Direct', { n: 1 }, 'direct-1')).rejects.toBeInstanceOf(ExecutionAlreadyExists);

    // The third and fourth keep all DescribeExecution answers, and their transition count, without their events.
    for (const [arn, n] of [
      [third, 3],
      [fourth, 4],
    ] as const) {
      const described = await sfn.send(new DescribeExecutionCommand({ executionArn: arn }));
      expect(described.status).toBe('SUCCEEDED');
      expect(JSON.parse(described.output ?? 'null')).toMatchObject({ n, echo: { event: { n } } });
      const record = cloud.executions.describe(arn);
      expect([record.eventLog, record.events.length, record.transitions]).toEqual(['pruned', 0, 1]);
    }
    const newest = cloud.executions.describe(fifth);
    expect([newest.eventLog, newest.transitions]).toEqual(['kept', 1]);
    expect(newest.events.filter((event) => event.type === 'StateEntered').map((event) => (event.state as { name: string }).name)).toEqual(['Invoke']);

    // The running execution counts toward neither bound, and its log grows on.
    const running = cloud.executions.describe(held);
    expect([running.status, running.eventLog]).toEqual(['RUNNING', 'kept']);
    expect(running.events.length).toBeGreaterThan(0);
    await sfn.send(new StopExecutionCommand({ executionArn: held, error: 'TestDone', cause: 'the retention test is over' }));
    await cloud.executions.settled(held);
    // Now it is the newest finished: it keeps its log, the fifth loses its own, and the third is forgotten.
    expect(cloud.executions.describe(held).eventLog).toBe('kept');
    expect(cloud.executions.describe(fifth).eventLog).toBe('pruned');
    await expect(sfn.send(new DescribeExecutionCommand({ executionArn: third }))).rejects.toBeInstanceOf(ExecutionDoesNotExist);
  });

  it('refuses a retention that is not a whole number, naming the field', () => {
    const service = (retention: { finished: number; eventLogs: number }) => () =>
      createExecutionService({
        stateMachines: [],
        lambda: { invoke: async () => ({ ok: true, payload: null }) },
        lambdaEndpoint: 'http://127.0.0.1:1',
        region: 'us-east-1',
        retention,
      });
    expect(service({ finished: -1, eventLogs: 1 })).toThrow('retention.finished must be a whole number, 0 or more (got -1)');
    expect(service({ finished: 10, eventLogs: 1.5 })).toThrow('retention.eventLogs must be a whole number, 0 or more (got 1.5)');
    expect(service(DEFAULT_EXECUTION_RETENTION)).not.toThrow();
  });
});
