import { z } from 'zod';
import { TaskFailure } from './errors';
import type { LambdaInvoker } from './lambda-client';
import type { LocalLog } from './log';
import { readReferencePath } from './reference-path';
import { invokeTaskLambda, observed, type JsonValue, type TaskHandler } from './sfn-task';
import type { CallbackTask } from './state-machines';
import type { TaskTokenRegistry } from './task-tokens';

/**
 * The callback pattern (`lambda:invoke.waitForTaskToken`), emulated: mint a task token where the
 * definition puts `$$.Task.Token`, invoke the function with it, and wait for SendTaskSuccess or
 * SendTaskFailure (task-tokens.ts), no longer than the Task's timeout.
 */

/** aws-local-stepfunctions' default when a Task sets no timeout (the ASL specification's 60 s). */
const LIBRARY_DEFAULT_TASK_TIMEOUT_MS = 60_000;

/**
 * The callback Task's timeout, computed exactly as aws-local-stepfunctions computes it (a truthy
 * `TimeoutSeconds`, else `TimeoutSecondsPath` against the Task's effective input, else 60 s), so
 * the token closes just before the library raises `States.Timeout`. `undefined` when the path does
 * not give a positive integer: the library then fails the state with `States.Runtime`.
 */
const callbackTimeoutMs = (task: CallbackTask, input: unknown, context: unknown): number | undefined => {
  if (task.TimeoutSeconds) return task.TimeoutSeconds * 1000;
  if (task.TimeoutSecondsPath === undefined) return LIBRARY_DEFAULT_TASK_TIMEOUT_MS;
  const seconds = readReferencePath(task.TimeoutSecondsPath, input, context);
  return Number.isInteger(seconds) && (seconds as number) >= 1 ? (seconds as number) * 1000 : undefined;
};

/** Puts the minted token wherever the definition placed `$$.Task.Token` (also inside formatted strings). */
const withToken = (value: unknown, placeholder: string, token: string): unknown => {
  if (typeof value === 'string') return value.replaceAll(placeholder, token);
  if (Array.isArray(value)) return value.map((item) => withToken(item, placeholder, token));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withToken(item, placeholder, token)]));
  }
  return value;
};

const CallbackParameters = z.looseObject({
  FunctionName: z.string().min(1),
  Payload: z.unknown().optional(),
  InvocationType: z.enum(['RequestResponse', 'Event']).optional(),
});

/** What every callback Task of one service shares. */
export interface CallbackTaskDeps {
  readonly lambda: LambdaInvoker;
  readonly tokens: TaskTokenRegistry;
  readonly log: LocalLog;
  /**
   * The value the service gives `$$.Task.Token` in every execution's context: the library
   * resolves the Task's parameters with it, and the handler puts the minted token in its place.
   */
  readonly placeholder: string;
}

/**
 * The local handler of one callback Task of one execution. `context` is the execution's context
 * object, against which a `TimeoutSecondsPath` of `$$.…` is read.
 *
 * @example
 * const handler = callbackTaskHandler({ lambda, tokens, log, placeholder }, executionArn, 'Await', task, context);
 */
export const callbackTaskHandler =
  (deps: CallbackTaskDeps, executionArn: string, stateName: string, task: CallbackTask, context: unknown): TaskHandler =>
  (input) =>
    observed(
      (async () => {
        const timeoutMs = callbackTimeoutMs(task, input, context);
        if (timeoutMs === undefined) throw new TaskFailure('States.Runtime', `${task.TimeoutSecondsPath} is not a positive integer`);
        const { token, settled } = deps.tokens.open({ executionArn, stateName }, timeoutMs);
        const parameters = CallbackParameters.safeParse(withToken(input, deps.placeholder, token));
        if (!parameters.success) {
          deps.tokens.close(token, 'its parameters were invalid');
          throw new TaskFailure('States.Runtime', `lambda:invoke.waitForTaskToken parameters are invalid: ${z.prettifyError(parameters.error)}`);
        }
        deps.log({ level: 'debug', component: 'states', message: `${stateName} waits for its task token`, data: { executionArn } });
        const { FunctionName, Payload, InvocationType } = parameters.data;
        await invokeTaskLambda(deps.lambda, FunctionName, Payload ?? {}, {
          invocationType: InvocationType ?? 'RequestResponse',
          onFailure: (why) => deps.tokens.close(token, why === 'failed' ? 'its Lambda failed' : 'its Lambda could not be invoked'),
        });
        // SendTaskSuccess only accepts JSON output, so what settles the token is a JSON value.
        return settled as Promise<JsonValue>;
      })(),
    );
