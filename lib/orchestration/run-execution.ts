import { SendTaskFailureCommand, SendTaskSuccessCommand, StartExecutionCommand, StopExecutionCommand, type SFNClient } from '@aws-sdk/client-sfn';
import { ExecutionStartFailed } from './errors';

export interface RunExecutionOptions {
  readonly client: SFNClient;
  readonly stateMachineArn: string;
}

/** Why a task token could not be answered. None of these is an error for tessera: the waiter is gone. */
export type WaitNotDelivered = 'TaskTimedOut' | 'TaskDoesNotExist' | 'InvalidToken';

const GONE: ReadonlySet<string> = new Set<WaitNotDelivered>(['TaskTimedOut', 'TaskDoesNotExist', 'InvalidToken']);

/** The error a cancelled run's execution is stopped with (StopExecution's `error`), shown in its history. */
export const RUN_CANCELLED_STOP_ERROR = 'RunCancelled';

/** True for a refusal to stop an execution because it is no longer running (see `stop`). */
const endedAlready = (error: unknown): boolean => (error as Error).name === 'ValidationException' && /\bnot running\b/i.test((error as Error).message);

/**
 * The ARN of the execution of `stateMachineArn` named `name`: Step Functions names an execution
 * `arn:<partition>:states:<region>:<account>:execution:<state machine name>:<execution name>`.
 *
 * @example
 * executionArnOf('arn:aws:states:eu-west-2:123456789012:stateMachine:Runs', 'r-1') // 'arn:aws:states:eu-west-2:123456789012:execution:Runs:r-1'
 */
export const executionArnOf = (stateMachineArn: string, name: string): string => `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;

/**
 * Starts run executions and answers the state machine's waiting tasks.
 *
 * @example
 * const executions = createRunExecutions({ client: new SFNClient({}), stateMachineArn });
 * await executions.start({ runId, tenantId });
 * await executions.release(taskToken, { subtaskId: 'B', state: 'ok' });
 */
export const createRunExecutions = ({ client, stateMachineArn }: RunExecutionOptions) => ({
  /**
   * Starts the execution named after the run, so a retry can never start a second one.
   * Step Functions answers a repeated StartExecution with the same name and input with the same
   * execution; `ExecutionAlreadyExists` means it already ran, which is also success here.
   */
  async start(run: { runId: string; tenantId: string }): Promise<{ executionArn?: string; alreadyStarted: boolean }> {
    try {
      const result = await client.send(
        new StartExecutionCommand({
          stateMachineArn,
          name: run.runId,
          input: JSON.stringify({ runId: run.runId, tenantId: run.tenantId, round: 1 }),
        }),
      );
      return { executionArn: result.executionArn, alreadyStarted: false };
    } catch (error) {
      if ((error as Error).name === 'ExecutionAlreadyExists') return { alreadyStarted: true };
      throw new ExecutionStartFailed(run.runId, { cause: error });
    }
  },

  /**
   * Lets a waiting Map iteration continue. Returns `delivered: false` when the waiter no longer
   * exists (its timeout fired first, or the execution ended): the ledger already holds the truth.
   */
  async release(taskToken: string, output: Record<string, unknown>): Promise<{ delivered: boolean; reason?: WaitNotDelivered }> {
    try {
      await client.send(new SendTaskSuccessCommand({ taskToken, output: JSON.stringify(output) }));
      return { delivered: true };
    } catch (error) {
      const name = (error as Error).name;
      if (GONE.has(name)) return { delivered: false, reason: name as WaitNotDelivered };
      throw error;
    }
  },

  /**
   * Stops the execution of a cancelled run (one StopExecution, however many subtasks wait in it
   * or in its batches' child executions, which Step Functions stops with it). Answers
   * `stopped: false` when there is no such execution (its start never happened), or when it had
   * already ended, which ministack refuses (`ValidationException`, "Execution is not running"):
   * an execution that ended before the cancel closes its run from that end, through the same
   * execution status rule, and the cancel recorded on the run item is what that closing reads.
   */
  async stop(runId: string): Promise<{ stopped: boolean }> {
    try {
      await client.send(
        new StopExecutionCommand({
          executionArn: executionArnOf(stateMachineArn, runId),
          error: RUN_CANCELLED_STOP_ERROR,
          cause: 'the run was cancelled (POST /runs/{runId}/cancel)',
        }),
      );
      return { stopped: true };
    } catch (error) {
      if ((error as Error).name === 'ExecutionDoesNotExist' || endedAlready(error)) return { stopped: false };
      throw error;
    }
  },

  /** Fails a waiting task with an error name the state machine can catch. */
  async fail(taskToken: string, error: string, cause: string): Promise<{ delivered: boolean }> {
    try {
      await client.send(new SendTaskFailureCommand({ taskToken, error, cause }));
      return { delivered: true };
    } catch (err) {
      if (GONE.has((err as Error).name)) return { delivered: false };
      throw err;
    }
  },
});
export type RunExecutions = ReturnType<typeof createRunExecutions>;
