import { App, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as logs from 'aws-cdk-lib/aws-logs';
import { RunStateMachine } from '../../lib/infra/run-state-machine';
import { localFunction, named } from './stack';

/**
 * The real `RunStateMachine` construct, with its three functions played by the `run-steps`
 * fixture, so the local cloud runs the synthesized Retry and Catch of every Task against a
 * handler that throws on request.
 */
export const RUN_STEPS_FIXTURE = 'test/local/fixtures/run-steps.ts';

export const synthRunMachineStack = (): unknown => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] }, builtinCloudFormationValidation: false });
  const stack = new Stack(app, 'RunMachineTest');
  const dispatch = localFunction(stack, 'Dispatch', RUN_STEPS_FIXTURE, { timeout: 2, environment: { STEP: 'dispatch' } });
  const reconcile = localFunction(stack, 'Reconcile', RUN_STEPS_FIXTURE, { timeout: 2, environment: { STEP: 'reconcile' } });
  const runs = new RunStateMachine(stack, 'Runs', {
    dispatch,
    deadline: reconcile,
    reconcile,
    mapMaxConcurrency: 1,
    timeout: Duration.minutes(5),
    logRetention: logs.RetentionDays.ONE_DAY,
    logRemovalPolicy: RemovalPolicy.DESTROY,
  });
  named(runs.stateMachine, 'Runs');
  return app.synth().getStackByName('RunMachineTest').template;
};
