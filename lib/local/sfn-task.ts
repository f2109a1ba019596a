import type { StateMachine } from 'aws-local-stepfunctions';
import { TaskFailure } from './errors';
import type { LambdaInvoker } from './lambda-client';

/**
 * What the local Task adapters (sfn-lambda-task.ts, sfn-callback-task.ts,
 * sfn-start-execution-task.ts) share: the handler shape aws-local-stepfunctions runs in place of
 * a Task's own resource, and the one mapping from a Lambda invocation's failure to the Task's error.
 */

/** A JSON value as aws-local-stepfunctions types it. */
export type JsonValue = Parameters<StateMachine['run']>[0];

/** Runs one Task state in place of its resource: the state's effective input in, its result out. */
export type TaskHandler = (input: unknown) => Promise<JsonValue>;

/**
 * The library abandons a Task's promise when it times out or aborts; it must never reject
 * unobserved, which would end the process.
 *
 * @example
 * const handler: TaskHandler = (input) => observed(work(input));
 */
export const observed = <T>(promise: Promise<T>): Promise<T> => {
  promise.catch(() => undefined);
  return promise;
};

/**
 * Invokes a Task's Lambda through the service's one client and answers its payload, or fails the
 * Task as Step Functions does, in the two ways an invocation can fail:
 *
 * - the Invoke call itself fails (no such function, throttled, the endpoint unreachable): the error
 *   is `Lambda.<the service's exception name>` (`Lambda.ServiceException` when it names none), the
 *   cause its message;
 * - the function fails: the error is the function's `errorType`, the cause its error document as
 *   JSON (`{"errorType":…,"errorMessage":…,"trace":[…]}`), which is what a Catch reads as `Cause`.
 *
 * `onFailure` runs first in either case (a callback Task closes its token there).
 *
 * @example
 * const payload = await invokeTaskLambda(lambda, 'Dispatch', { runId });
 */
export const invokeTaskLambda = async (
  lambda: LambdaInvoker,
  functionName: string,
  payload: unknown,
  options: { readonly invocationType?: 'RequestResponse' | 'Event'; readonly onFailure?: (why: 'not invoked' | 'failed') => void } = {},
): Promise<unknown> => {
  let outcome;
  try {
    outcome = await lambda.invoke(functionName, payload, options.invocationType === undefined ? {} : { invocationType: options.invocationType });
  } catch (error) {
    options.onFailure?.('not invoked');
    const code = (error as Error).cause instanceof Error ? ((error as Error).cause as Error).name : 'ServiceException';
    throw new TaskFailure(`Lambda.${code}`, (error as Error).message);
  }
  if (!outcome.ok) {
    options.onFailure?.('failed');
    throw new TaskFailure(outcome.error.errorType, JSON.stringify(outcome.error));
  }
  return outcome.payload;
};
