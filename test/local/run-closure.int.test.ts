import { StopExecutionCommand, type SFNClient } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTesseraClient, type TesseraClient } from '../../lib/client';
import type { RunRequestInput, RunResource } from '../../lib/contract';
import { startLocalCloud, type LocalCloud } from '../../lib/local/cloud';
import { LOCAL_AUTH } from '../../lib/local/local-auth';
import { synthesizeLocalTemplate } from '../../lib/local/local-template';
import { PACKAGE_ROOT } from '../../lib/infra/tessera-function';
import { exampleWorkerModule } from '../../examples/app/cdk';
import { registry } from '../../examples/app/fault-workers';
import { uniqueName } from '../support/aws';
import { eventually, finishedExecution, sfnClient } from './support';

/**
 * The whole tessera template in the local cloud: an execution stopped mid-run reaches the run
 * closure rule read from the template (EventBridge's "Execution Status Change" event, delivered to
 * the reconcile function), which closes the run with its coverage and the reason.
 */
describe('run closure in the local cloud', () => {
  let cloud: LocalCloud;
  let sfn: SFNClient;
  let tessera: TesseraClient;

  beforeAll(async () => {
    process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
    process.env.POWERTOOLS_TRACE_ENABLED ??= 'false';
    cloud = await startLocalCloud({
      // The run uses the fault-injection kind `chaos`.
      template: synthesizeLocalTemplate(exampleWorkerModule({ faultInjection: true })),
      repoRoot: PACKAGE_ROOT,
      registry,
      emulators: { dynamodbEndpoint: inject('dynamoEndpoint'), sqsEndpoint: inject('sqsEndpoint') },
      namePrefix: `${uniqueName('rc')}-`,
      functionEnvironment: { POWERTOOLS_LOG_LEVEL: 'ERROR' },
      jwt: { issuer: LOCAL_AUTH.issuer, audience: [LOCAL_AUTH.audience], tenantClaim: LOCAL_AUTH.tenantClaim },
    });
    sfn = sfnClient(cloud);
    tessera = createTesseraClient({ apiUrl: cloud.apiUrl ?? '', token: await cloud.mintToken({ tenant: 'acme', subject: 'closure' }) });
  });
  afterAll(() => cloud?.stop());

  // A finishes at once; B keeps working 20 s towards a 60 s deadline, so the run is mid-flight.
  const request: RunRequestInput = {
    goal: 'Run closure: an execution stopped while one subtask still works',
    universe: { dimension: 'ids', ids: ['quick', 'slow'] },
    questions: [{ id: 'qB' }],
    subtasks: [
      {
        id: 'A',
        worker: 'chaos',
        scope: { ids: ['quick'] },
        input: { fault: 'none' },
        deadlineSeconds: 60,
        budget: { modelCalls: 1, estimatedCostPerCall: 0 },
      },
      {
        id: 'B',
        worker: 'chaos',
        questionIds: ['qB'],
        scope: { ids: ['slow'] },
        input: { fault: 'ignore-deadline', delayMs: 20_000 },
        deadlineSeconds: 60,
        budget: { modelCalls: 1, estimatedCostPerCall: 0 },
      },
    ],
    policy: { retry: { timed_out: 0, invalid: 0, empty: 0 }, maxRounds: 1 },
    budget: { modelCalls: 2, costLimit: 1 },
  };

  it('StopExecution mid-run: the run is closed failed within a minute, with the reason and its coverage', async () => {
    const { runId } = await tessera.createRun(request);
    await eventually(
      'A to finish while B still works',
      async () => {
        const { byState } = (await tessera.getRun(runId)).progress;
        return byState.ok === 1 && byState.running === 1 ? true : undefined;
      },
      30_000,
    );
    const execution = cloud.executions.executions().find((e) => e.name === runId);
    expect(execution?.status).toBe('RUNNING');

    await sfn.send(new StopExecutionCommand({ executionArn: execution?.executionArn, error: 'OperatorStopped', cause: 'stopped by the run-closure test' }));
    expect((await finishedExecution(sfn, execution?.executionArn as string)).status).toBe('ABORTED');

    // waitForRun gives up after its timeout: a run still running after a minute fails the test.
    const ended: RunResource = await tessera.waitForRun(runId, { intervalMs: 250, timeoutMs: 60_000 });
    expect(ended.status).toBe('failed');
    // Closing stores the run's status first, then sweeps its unfinished subtasks to `cancelled`;
    // a read between the two sees B still running, so the subtasks get the rest of the minute.
    const run: RunResource = await eventually(
      'every subtask of the closed run to end',
      async () => {
        const read = await tessera.getRun(runId);
        return read.subtasks.every((s) => s.state !== 'pending' && s.state !== 'running') ? read : undefined;
      },
      30_000,
    );
    expect(run.status).toBe('failed');
    expect(run.error).toEqual({
      code: 'ExecutionAborted',
      message: "the run's execution was aborted before the run was recorded; the run was closed when the execution ended",
    });
    expect(run.subtasks.map((s) => [s.id, s.state])).toEqual([
      ['A', 'ok'],
      ['B', 'cancelled'],
    ]);
    expect(run.answer?.coverage).toMatchObject({ complete: false, missingQuestions: ['qB'], degradedReason: ['B:missing_outcome'] });
    expect(run.answer?.text).toMatch(/^The run failed: its execution was aborted\. /);
  }, 120_000);
});
