import { z } from 'zod';
import { StatesApiError, TaskFailure } from './errors';
import type { LocalLog } from './log';
import type { ExecutionRecord, ExecutionService } from './sfn-executions';
import { observed, type JsonValue, type TaskHandler } from './sfn-task';

const StartExecutionParameters = z.looseObject({
  StateMachineArn: z.string().min(1),
  Input: z.unknown().optional(),
  Name: z.string().optional(),
});

/** What the adapter needs of the execution registry. */
export interface StartExecutionTaskDeps {
  readonly start: ExecutionService['start'];
  readonly settled: ExecutionService['settled'];
  /** Records a running child under the execution that started it (a parent that ends stops its children). */
  readonly adopt: (parentArn: string, childArn: string) => void;
  /** Forgets a child that has ended. */
  readonly release: (parentArn: string, childArn: string) => void;
  readonly log: LocalLog;
}

/**
 * The local handler of one `startExecution.sync:2` Task: start the child state machine in
 * process, wait for it, and answer what Step Functions answers (DescribeExecution, `Output` as
 * JSON); a child that does not succeed fails the Task with `States.TaskFailed`, as on AWS, and a
 * refused start with `StepFunctions.<the API's error code>`.
 *
 * @example
 * const handler = startExecutionTaskHandler({ start, settled, adopt, release, log }, parentArn, 'StartBatch');
 */
export const startExecutionTaskHandler =
  (deps: StartExecutionTaskDeps, parentArn: string, stateName: string): TaskHandler =>
  (input) =>
    observed(
      (async () => {
        const parameters = StartExecutionParameters.safeParse(input);
        if (!parameters.success) throw new TaskFailure('States.Runtime', `startExecution parameters are invalid: ${z.prettifyError(parameters.error)}`);
        const { StateMachineArn, Input, Name } = parameters.data;
        let child: ExecutionRecord;
        try {
          child = deps.start({ stateMachineArn: StateMachineArn, ...(Name === undefined ? {} : { name: Name }), input: JSON.stringify(Input ?? {}) });
        } catch (error) {
          // The integration names a refused start after the API's error: StepFunctions.<code>.
          if (error instanceof StatesApiError) throw new TaskFailure(`StepFunctions.${error.code}`, error.message);
          throw error;
        }
        deps.adopt(parentArn, child.executionArn);
        deps.log({ level: 'debug', component: 'states', message: `${stateName} started ${child.name}`, data: { executionArn: child.executionArn } });
        const ended = await deps.settled(child.executionArn);
        deps.release(parentArn, child.executionArn);
        const described = {
          ExecutionArn: ended.executionArn,
          StateMachineArn: ended.stateMachineArn,
          Name: ended.name,
          Status: ended.status,
          StartDate: ended.startDate.getTime(),
          ...(ended.stopDate === undefined ? {} : { StopDate: ended.stopDate.getTime() }),
          Input: JSON.parse(ended.input) as JsonValue,
        };
        if (ended.status !== 'SUCCEEDED') {
          throw new TaskFailure('States.TaskFailed', JSON.stringify({ ...described, Error: ended.error, Cause: ended.cause }));
        }
        return { ...described, Output: (ended.output === undefined ? null : JSON.parse(ended.output)) as JsonValue };
      })(),
    );
