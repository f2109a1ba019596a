import type { LambdaInvoker } from './lambda-client';
import type { LocalLog } from './log';
import { invokeTaskLambda, observed, type JsonValue, type TaskHandler } from './sfn-task';

/**
 * The local handler of a plain Lambda Task (a function ARN, or `lambda:invoke`, which the Lambda
 * endpoint unwraps): the Invoke request the library would send, through the service's one Lambda
 * client. The library builds a new SDK client for every Task it runs itself, and each opens a
 * connection of its own that the endpoint keeps: two file descriptors per Map iteration, which a
 * run of thousands of subtasks turns into thousands (`EMFILE`). Failures are mapped by
 * {@link invokeTaskLambda}.
 *
 * @example
 * const handler = lambdaTaskHandler({ lambda, log }, 'Dispatch', dispatchArn);
 */
export const lambdaTaskHandler =
  (deps: { readonly lambda: LambdaInvoker; readonly log: LocalLog }, stateName: string, resource: string): TaskHandler =>
  (input) =>
    observed(
      (async () => {
        const payload = await invokeTaskLambda(deps.lambda, resource, input, {
          onFailure: (why) =>
            deps.log({ level: 'debug', component: 'states', message: `${stateName}: its Lambda ${why === 'failed' ? 'failed' : 'could not be invoked'}` }),
        });
        return payload as JsonValue;
      })(),
    );
