import { StartExecutionCommand, type SFNClient } from '@aws-sdk/client-sfn';
import { inject, afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STATE_NAMES } from '../../lib/infra/run-state-machine';
import { START_EXECUTION_REFUSED_ERRORS } from '../../lib/orchestration/errors';
import { startLocalCloud, type LocalCloud } from '../../lib/local/cloud';
import { uniqueName } from '../support/aws';
import { REPO_ROOT } from './stack';
import { synthRunMachineStack } from './run-machine-stack';
import { finishedExecution, outputOf, sfnClient } from './support';

/**
 * A round, as synthesized, run by the local cloud: Dispatch answers its batches, each
 * StartBatch starts the batch machine's child execution in process and waits for it; a child that
 * fails fails StartBatch, and the run's Catch sends the run to Finalize, never leaving it running.
 */
describe('run state machine: every round runs as child executions', () => {
  let cloud: LocalCloud;
  let sfn: SFNClient;
  const run = async (input: Record<string, unknown>, prefix: string) => {
    const stateMachineArn = cloud.resources.stateMachines[0]?.arn as string;
    const runId = uniqueName(prefix);
    const { executionArn } = await sfn.send(
      new StartExecutionCommand({ stateMachineArn, name: runId, input: JSON.stringify({ runId, tenantId: 't1', round: 1, ...input }) }),
    );
    return { runId, executionArn: executionArn as string, described: await finishedExecution(sfn, executionArn as string) };
  };
  const entered = (executionArn: string): string[] =>
    cloud.executions
      .describe(executionArn)
      .events.filter((event) => event.type === 'StateEntered')
      .map((event) => String((event.state as { name?: string } | undefined)?.name));
  /** The child executions a run started (named `<runId>-<round>-<batch>`). */
  const children = (runId: string) => cloud.executions.executions().filter((e) => e.name.startsWith(`${runId}-`));

  beforeAll(async () => {
    cloud = await startLocalCloud({
      template: synthRunMachineStack(),
      repoRoot: REPO_ROOT,
      emulators: { dynamodbEndpoint: inject('dynamoEndpoint'), sqsEndpoint: inject('sqsEndpoint') },
      namePrefix: `${uniqueName('b')}-`,
    });
    sfn = sfnClient(cloud);
  });
  afterAll(() => cloud?.stop());

  it('three batches: three child executions, each LoadBatch then its Map, and the run reconciles', async () => {
    const { runId, executionArn, described } = await run({ batches: 3 }, 'batched-ok');
    expect(described.status).toBe('SUCCEEDED');
    expect(outputOf(described)).toMatchObject({ status: 'succeeded' });
    expect(entered(executionArn)).toEqual([
      STATE_NAMES.dispatch,
      STATE_NAMES.awaitBatches,
      STATE_NAMES.startBatch,
      STATE_NAMES.startBatch,
      STATE_NAMES.startBatch,
      STATE_NAMES.reconcile,
      STATE_NAMES.nextRound,
      STATE_NAMES.runEnded,
    ]);
    const started = children(runId);
    expect(started.map((e) => e.name).sort()).toEqual([`${runId}-1-0`, `${runId}-1-1`, `${runId}-1-2`]);
    expect(started.map((e) => e.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    // Each child is given its batch only, and answers its batch number only.
    const first = started.find((e) => e.name === `${runId}-1-0`)!;
    expect(JSON.parse(first.input)).toMatchObject({ runId, tenantId: 't1', round: 1, batch: 0 });
    expect(JSON.parse(first.output ?? 'null')).toBe(0);
    expect(entered(first.executionArn)).toEqual([STATE_NAMES.loadBatch, STATE_NAMES.awaitBatchSubtasks]);
  });

  it('a child that fails fails StartBatch: the Catch sends the run to Finalize, then RunFailed', async () => {
    const { runId, executionArn, described } = await run({ batches: 2 }, 'batch-fails');
    expect(described.status).toBe('FAILED');
    expect(described.error).toBe('RunFailed');
    const states = entered(executionArn);
    expect(states.slice(0, 2)).toEqual([STATE_NAMES.dispatch, STATE_NAMES.awaitBatches]);
    expect(states.slice(-2)).toEqual([STATE_NAMES.finalize, STATE_NAMES.runFailed]);
    expect(states).not.toContain(STATE_NAMES.reconcile);
    // Every child has ended: the failed one, and any sibling the failed Map stopped.
    await Promise.all(children(runId).map((e) => cloud.executions.settled(e.executionArn)));
    expect(children(runId).some((e) => e.status === 'FAILED' && e.error === 'BatchNotFound')).toBe(true);
    expect(children(runId).every((e) => e.status !== 'RUNNING')).toBe(true);
  });
});

/**
 * The account's quota of open executions, set to 3: a run and its first two children fill it, so
 * the third StartBatch is refused with StepFunctions.ExecutionLimitExceeded. StartBatch retries a
 * refused start, and the children finish in milliseconds, so the retried start finds room.
 */
describe('run state machine: a StartBatch refused by the open-executions quota is retried', () => {
  let cloud: LocalCloud;
  let sfn: SFNClient;

  beforeAll(async () => {
    cloud = await startLocalCloud({
      template: synthRunMachineStack(),
      repoRoot: REPO_ROOT,
      emulators: { dynamodbEndpoint: inject('dynamoEndpoint'), sqsEndpoint: inject('sqsEndpoint') },
      namePrefix: `${uniqueName('q')}-`,
      maxOpenExecutions: 3,
    });
    sfn = sfnClient(cloud);
  });
  afterAll(() => cloud?.stop());

  it('three batches under a quota of three open executions: one start is refused, retried, and the run succeeds', async () => {
    const stateMachineArn = cloud.resources.stateMachines[0]?.arn as string;
    const runId = uniqueName('quota');
    const { executionArn } = await sfn.send(
      new StartExecutionCommand({ stateMachineArn, name: runId, input: JSON.stringify({ runId, tenantId: 't1', round: 1, batches: 3 }) }),
    );
    const described = await finishedExecution(sfn, executionArn as string);
    expect(described.status).toBe('SUCCEEDED');
    expect(outputOf(described)).toMatchObject({ status: 'succeeded' });
    const events = cloud.executions.describe(executionArn as string).events;
    const failed = events.filter((event) => event.type === 'StateFailed');
    const retried = events.filter((event) => event.type === 'StateRetried');
    // Each refusal fails StartBatch with the quota's error, and each is retried by the one retrier.
    expect(failed.length).toBeGreaterThanOrEqual(1);
    expect(failed.map((event) => [(event.state as { name?: string }).name, event.Error])).toEqual(
      failed.map(() => [STATE_NAMES.startBatch, 'StepFunctions.ExecutionLimitExceeded']),
    );
    expect(retried.map((event) => (event.retry as { retrier: { ErrorEquals: string[] } }).retrier.ErrorEquals)).toEqual(
      failed.map(() => [...START_EXECUTION_REFUSED_ERRORS]),
    );
    const children = cloud.executions.executions().filter((e) => e.name.startsWith(`${runId}-`));
    expect(children.map((e) => e.name).sort()).toEqual([`${runId}-1-0`, `${runId}-1-1`, `${runId}-1-2`]);
    expect(children.map((e) => e.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
  });
});
