import { SendTaskFailureCommand, SendTaskSuccessCommand, StartExecutionCommand, type SFNClient } from '@aws-sdk/client-sfn';
import { ExecutionStartFailed } from './errors';

export interface RunExecutionOptions {
  readonly client: SFNClient;
  readonly stateMachineArn: string;
}

/** Why a task token could not be answered. None of these is an error for tessera: the waiter is gone. */
export type WaitNotDelivered = 'TaskTimedOut' | 'TaskDoesNotExist' | 'InvalidToken';

const GONE: ReadonlySet<string> = new Set<WaitNotDelivered>(['TaskTimedOut', 'TaskDoesNotExist', 'InvalidToken']);

/**
 * SendTaskSuccess calls in flight at once when many waiters are released together (a cancelled
 * run). Step Functions throttles SendTaskSuccess per account with a token bucket, and every
 * running execution of the account draws on it: a bounded number of calls keeps one large cancel
 * from being throttled, or from throttling other runs' workers, while still answering hundreds of
 * waiters a second (the SDK's own retries absorb a throttled call).
 */
export const RELEASE_CONCURRENCY = 16;

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

/**
 * Releases many waiting tasks with the same output, {@link RELEASE_CONCURRENCY} at a time (never
 * one unbounded burst). Answers how many were delivered; a waiter already gone is not delivered,
 * and any other failure rejects once the calls in flight have settled.
 *
 * @example
 * await releaseAll(executions, closed.taskTokens, { cancelled: true }); // { delivered: 120, gone: 3 }
 */
export const releaseAll = async (
  executions: Pick<RunExecutions, 'release'>,
  taskTokens: readonly string[],
  output: Record<string, unknown>,
): Promise<{ delivered: number; gone: number }> => {
  let next = 0;
  let delivered = 0;
  const lane = async (): Promise<void> => {
    while (next < taskTokens.length) {
      const token = taskTokens[next++] as string;
      if ((await executions.release(token, output)).delivered) delivered += 1;
    }
  };
  const lanes = await Promise.allSettled(Array.from({ length: Math.min(RELEASE_CONCURRENCY, taskTokens.length) }, lane));
  const failed = lanes.find((settled): settled is PromiseRejectedResult => settled.status === 'rejected');
  if (failed) throw failed.reason;
  return { delivered, gone: taskTokens.length - delivered };
};
