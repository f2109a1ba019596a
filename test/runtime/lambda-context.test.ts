import type { Context } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger, onColdStart, startInvocation } from '../../lib/runtime/lambda';

/**
 * Every log line carries the Lambda context of its invocation: `onColdStart`, which every handler
 * is wrapped in, adds it to every logger `createLogger` made, and a warm invocation's lines name
 * that invocation's request id and say it was not a cold start.
 */

const context = (awsRequestId: string): Context => ({
  awsRequestId,
  functionName: 'tessera-Dispatch',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:tessera-Dispatch',
  memoryLimitInMB: '1024',
  logGroupName: '/aws/lambda/tessera-Dispatch',
  logStreamName: 'stream',
  callbackWaitsForEmptyEventLoop: false,
  getRemainingTimeInMillis: () => 1000,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
});

/** The JSON log lines written to stdout while `run` runs. */
const captured = async (run: () => Promise<unknown>): Promise<Record<string, unknown>[]> => {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    await run();
  } finally {
    spy.mockRestore();
  }
  return lines
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
};

describe('the Lambda context on log lines', () => {
  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
  });

  it('adds the request id, the function and the cold start to every line of every component, per invocation', async () => {
    // What Lambda sets for an on-demand instance; Powertools reports no cold start without it.
    vi.stubEnv('AWS_LAMBDA_INITIALIZATION_TYPE', 'on-demand');
    const handler = onColdStart(() => {
      const dispatch = createLogger('dispatch', { POWERTOOLS_LOG_LEVEL: 'INFO' });
      const ledger = createLogger('ledger', { POWERTOOLS_LOG_LEVEL: 'INFO' });
      return async (event: { runId: string }) => {
        // What the application does at the start of each invocation: its own keys, after a reset.
        startInvocation(dispatch, { runId: event.runId });
        dispatch.info('round dispatched');
        ledger.info('manifest written');
      };
    });

    const first = await captured(() => handler({ runId: 'r-1' }, context('req-1')));
    const second = await captured(() => handler({ runId: 'r-2' }, context('req-2')));

    expect(first.map((line) => [line.component, line.message, line.function_request_id, line.cold_start])).toEqual([
      ['dispatch', 'round dispatched', 'req-1', true],
      ['ledger', 'manifest written', 'req-1', true],
    ]);
    expect(first[0]).toMatchObject({ function_name: 'tessera-Dispatch', function_memory_size: '1024', runId: 'r-1' });
    // A warm invocation: its own request id, no cold start, and the earlier run's key gone.
    expect(second.map((line) => [line.component, line.function_request_id, line.cold_start])).toEqual([
      ['dispatch', 'req-2', false],
      ['ledger', 'req-2', false],
    ]);
    expect(second[0]?.runId).toBe('r-2');
  });

  it('adds nothing when called without a Lambda context (a test calling the handler directly)', async () => {
    const handler = onColdStart(() => {
      const logger = createLogger('api', { POWERTOOLS_LOG_LEVEL: 'INFO' });
      return async () => logger.info('no context');
    });
    const [line] = await captured(() => handler({}, undefined));
    expect(line?.message).toBe('no context');
    expect(line?.function_request_id).toBeUndefined();
  });
});
