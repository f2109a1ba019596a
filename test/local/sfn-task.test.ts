import { describe, expect, it } from 'vitest';
import { TaskFailure } from '../../lib/local/errors';
import type { InvokeResult, LambdaInvoker } from '../../lib/local/lambda-client';
import { invokeTaskLambda } from '../../lib/local/sfn-task';

/**
 * The one mapping from a Task's Lambda invocation to its result or its error, for every local Task
 * adapter. The invoker is the service's own port (lib/local/lambda-client.ts), answered here by
 * hand; the Lambda endpoint itself is exercised in stepfunctions.int.test.ts.
 */
const invoker = (answer: () => Promise<InvokeResult>): LambdaInvoker & { calls: unknown[] } => {
  const calls: unknown[] = [];
  return {
    calls,
    invoke: async (functionName, payload, options) => {
      calls.push({ functionName, payload, options });
      return answer();
    },
  };
};

const failureOf = async (work: Promise<unknown>): Promise<{ name: string; message: string }> => {
  const error = await work.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(TaskFailure);
  return { name: (error as TaskFailure).name, message: (error as TaskFailure).message };
};

describe('invokeTaskLambda: a Task Lambda’s failure, as Step Functions names it', () => {
  it('answers the payload of a function that succeeds, passing the invocation type on', async () => {
    const lambda = invoker(async () => ({ ok: true, payload: { echoed: 1 } }));
    expect(await invokeTaskLambda(lambda, 'Echo', { n: 1 }, { invocationType: 'Event' })).toEqual({ echoed: 1 });
    expect(lambda.calls).toEqual([{ functionName: 'Echo', payload: { n: 1 }, options: { invocationType: 'Event' } }]);
  });

  it('a function error: the error is its errorType, the cause its error document as JSON', async () => {
    const document = { errorType: 'EchoFailed', errorMessage: 'asked to fail', trace: ['at echo.ts:20'] };
    const why: string[] = [];
    const failure = await failureOf(
      invokeTaskLambda(
        invoker(async () => ({ ok: false, error: document })),
        'Echo',
        {},
        { onFailure: (reason) => why.push(reason) },
      ),
    );
    expect(failure).toEqual({ name: 'EchoFailed', message: '{"errorType":"EchoFailed","errorMessage":"asked to fail","trace":["at echo.ts:20"]}' });
    expect(why).toEqual(['failed']);
  });

  it('an Invoke that fails: Lambda.<the exception it names>, or Lambda.ServiceException when it names none', async () => {
    const notFound = Object.assign(new Error('Function not found: Gone'), { name: 'ResourceNotFoundException' });
    const why: string[] = [];
    const named = await failureOf(
      invokeTaskLambda(
        invoker(async () => {
          throw new Error('invoke Gone failed', { cause: notFound });
        }),
        'Gone',
        {},
        { onFailure: (reason) => why.push(reason) },
      ),
    );
    expect(named).toEqual({ name: 'Lambda.ResourceNotFoundException', message: 'invoke Gone failed' });
    const unnamed = await failureOf(
      invokeTaskLambda(
        invoker(async () => {
          throw new Error('socket hang up');
        }),
        'Echo',
        {},
      ),
    );
    expect(unnamed).toEqual({ name: 'Lambda.ServiceException', message: 'socket hang up' });
    expect(why).toEqual(['not invoked']);
  });
});
