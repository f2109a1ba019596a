import { StartExecutionCommand, type SFNClient } from '@aws-sdk/client-sfn';
import { inject, afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STATE_NAMES } from '../../lib/infra/run-state-machine';
import { TRANSIENT_ERRORS } from '../../lib/infra/transient-errors';
import { WriteConflict } from '../../lib/ledger/errors';
import { EnqueueFailed } from '../../lib/queue/errors';
import { startLocalCloud, type LocalCloud } from '../../lib/local/cloud';
import { uniqueName } from '../support/aws';
import { REPO_ROOT } from './stack';
import { synthRunMachineStack } from './run-machine-stack';
import { finishedExecution, outputOf, sfnClient } from './support';

/**
 * The run state machine's Retry and Catch, as synthesized, run locally against a handler that
 * throws: each transient error is retried and the run still succeeds; anything else goes to the
 * Catch and Finalize.
 */
describe('run state machine: transient errors are retried, others are caught', () => {
  let cloud: LocalCloud;
  let sfn: SFNClient;
  const run = async (input: Record<string, unknown>, prefix = 'run') => {
    const stateMachineArn = cloud.resources.stateMachines[0]?.arn as string;
    const runId = uniqueName(prefix);
    const { executionArn } = await sfn.send(
      new StartExecutionCommand({ stateMachineArn, name: runId, input: JSON.stringify({ runId, tenantId: 't1', round: 1, ...input }) }),
    );
    return { runId, executionArn: executionArn as string, described: await finishedExecution(sfn, executionArn as string) };
  };
  /** Names of the states of each event of `type` (`StateEntered`, `StateRetried`, …), in order. */
  const states = (executionArn: string, type: string): string[] =>
    cloud.executions
      .describe(executionArn)
      .events.filter((event) => event.type === type)
      .map((event) => String((event.state as { name?: string } | undefined)?.name));

  beforeAll(async () => {
    cloud = await startLocalCloud({
      template: synthRunMachineStack(),
      repoRoot: REPO_ROOT,
      emulators: { dynamodbEndpoint: inject('dynamoEndpoint'), sqsEndpoint: inject('sqsEndpoint') },
      namePrefix: `${uniqueName('r')}-`,
    });
    sfn = sfnClient(cloud);
  });
  afterAll(() => cloud?.stop());

  // The adapters' transient errors are named here from the real classes as well, so a list that
  // dropped one would fail here rather than shrink the test.
  const transient = [
    ...new Set([...TRANSIENT_ERRORS, new WriteConflict({ operation: 'appendRound', attempts: 8 }).name, new EnqueueFailed(['A'], ['ServiceUnavailable']).name]),
  ];

  it.each(transient)('Dispatch failing once with %s is retried and the run succeeds', async (name) => {
    const { executionArn, described } = await run({ throwOnce: name });
    expect(described.status).toBe('SUCCEEDED');
    expect(outputOf(described)).toMatchObject({ status: 'succeeded', dispatchAttempts: 2 });
    expect(states(executionArn, 'StateRetried')).toEqual([STATE_NAMES.dispatch]);
    expect(states(executionArn, 'StateEntered')).not.toContain(STATE_NAMES.finalize);
  });

  it('an error that is not transient is not retried: the Catch sends the run to Finalize, then RunFailed', async () => {
    const { executionArn, described } = await run({ throwAlways: 'PlanRejected' });
    expect(described.status).toBe('FAILED');
    expect(described.error).toBe('RunFailed');
    expect(states(executionArn, 'StateRetried')).toEqual([]);
    expect(states(executionArn, 'StateEntered')).toEqual([STATE_NAMES.dispatch, STATE_NAMES.finalize, STATE_NAMES.runFailed]);
  });

  it('a run that Reconcile records as failed by its policy ends its execution SUCCEEDED: only faults fail an execution', async () => {
    const { executionArn, described } = await run({}, 'fails-policy');
    expect(described.status).toBe('SUCCEEDED');
    expect(outputOf(described)).toMatchObject({ status: 'failed' });
    expect(states(executionArn, 'StateEntered')).toEqual([
      STATE_NAMES.dispatch,
      STATE_NAMES.awaitBatches,
      STATE_NAMES.reconcile,
      STATE_NAMES.nextRound,
      STATE_NAMES.runEnded,
    ]);
  });
});
