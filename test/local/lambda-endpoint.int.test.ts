import { InvokeCommand, LambdaClient, ResourceNotFoundException, type InvokeCommandOutput } from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HandlerLoadError } from '../../lib/local/errors';
import { LOCAL_CREDENTIALS } from '../../lib/local/lambda-client';
import { LAMBDA_INVOKE_INTEGRATION, startLambdaEndpoint, type LambdaEndpoint } from '../../lib/local/lambda-endpoint';
import { loadFunctions } from '../../lib/local/lambda-runtime';
import { createResolver, parseTemplate, type TemplateResolver } from '../../lib/local/template';
import { REPO_ROOT, synthTestStack } from './stack';

const REGION = 'eu-west-1';
const echoArn = `arn:aws:lambda:${REGION}:000000000000:function:Echo`;

/** The endpoint's JSON answer; Lambda returns the function's result as JSON bytes. */
const json = (output: InvokeCommandOutput): Record<string, unknown> => JSON.parse(new TextDecoder().decode(output.Payload));

describe('local Lambda endpoint', () => {
  let resolver: TemplateResolver;
  let endpoint: LambdaEndpoint;
  let lambda: LambdaClient;
  const invoke = (FunctionName: string, payload: unknown, InvocationType?: 'Event') =>
    lambda.send(new InvokeCommand({ FunctionName, Payload: new TextEncoder().encode(JSON.stringify(payload)), ...(InvocationType ? { InvocationType } : {}) }));

  beforeAll(async () => {
    resolver = createResolver(parseTemplate(synthTestStack()), { region: REGION, queueUrl: (name) => `http://sqs.test/000000000000/${name}` });
    // The fixtures' AWS clients are only built, never used, in this file.
    const runtimeEnvironment = {
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:9',
      AWS_ENDPOINT_URL_SQS: 'http://127.0.0.1:9',
      AWS_ENDPOINT_URL_SFN: 'http://127.0.0.1:9',
    };
    endpoint = await startLambdaEndpoint({ functions: await loadFunctions({ resolver, repoRoot: REPO_ROOT, runtimeEnvironment }) });
    lambda = new LambdaClient({ endpoint: endpoint.url, region: REGION, credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
  });
  afterAll(() => endpoint?.stop());

  it('runs two functions of one module, each with its own template environment', async () => {
    const [one, two] = await Promise.all([invoke('Echo', { n: 1 }), invoke('EchoTwo', { n: 2 })]);
    expect(json(one)).toMatchObject({ greeting: 'hello from Echo', event: { n: 1 }, tableName: 'Records' });
    expect(json(two)).toMatchObject({ greeting: 'hello from EchoTwo', event: { n: 2 } });
    expect(one.StatusCode).toBe(200);
    expect(one.ExecutedVersion).toBe('$LATEST');
  });

  it('passes a Lambda context with the invoked ARN and the time left under the function timeout', async () => {
    const answer = json(await invoke(echoArn, {}));
    expect(answer).toMatchObject({ functionName: 'Echo', invokedFunctionArn: echoArn });
    expect(answer.awsRequestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.remainingMs).toBeGreaterThan(0);
    expect(answer.remainingMs).toBeLessThanOrEqual(2_000);
  });

  it('reports a thrown error as Lambda does: Unhandled, with errorType, errorMessage and trace', async () => {
    const output = await invoke('Echo', { fail: true });
    expect(output.FunctionError).toBe('Unhandled');
    expect(json(output)).toMatchObject({
      errorType: 'EchoFailed',
      errorMessage: 'asked to fail',
      trace: expect.arrayContaining([expect.stringContaining('EchoFailed')]),
    });
  });

  it('ends an invocation at the function timeout with Sandbox.Timedout', async () => {
    const output = await invoke('EchoTwo', { sleepMs: 1_500 });
    expect(output.FunctionError).toBe('Unhandled');
    expect(json(output)).toMatchObject({ errorType: 'Sandbox.Timedout', errorMessage: expect.stringContaining('Task timed out after 1.00 seconds') });
  });

  it('accepts an Event invocation at once', async () => {
    const output = await invoke('Echo', { n: 3 }, 'Event');
    expect(output.StatusCode).toBe(202);
  });

  it('answers ResourceNotFoundException for an unknown function', async () => {
    await expect(invoke('Nope', {})).rejects.toBeInstanceOf(ResourceNotFoundException);
  });

  it('unwraps the Step Functions lambda:invoke integration and answers with its result shape', async () => {
    const answer = json(await invoke(LAMBDA_INVOKE_INTEGRATION, { FunctionName: echoArn, Payload: { item: 'a' } }));
    expect(answer).toMatchObject({ ExecutedVersion: '$LATEST', StatusCode: 200, Payload: { greeting: 'hello from Echo', event: { item: 'a' } } });
  });

  it('fails the integration with the function error type, or Lambda.ResourceNotFoundException', async () => {
    const failed = await invoke(LAMBDA_INVOKE_INTEGRATION, { FunctionName: echoArn, Payload: { fail: true } });
    expect(failed.FunctionError).toBe('Unhandled');
    expect(json(failed).errorType).toBe('EchoFailed');
    const missing = await invoke(LAMBDA_INVOKE_INTEGRATION, { FunctionName: 'Nope', Payload: {} });
    expect(json(missing).errorType).toBe('Lambda.ResourceNotFoundException');
  });

  it("fails a synchronous invocation whose result is over Lambda's 6 MB response limit, as Lambda does", async () => {
    // {"pad":"…"} is 10 bytes of JSON around the pad: 6,291,546 bytes of pad make exactly the limit, one more is over it.
    const fits = await invoke('Echo', { padBytes: 6_291_546 });
    expect(fits.FunctionError).toBeUndefined();
    expect(fits.Payload?.byteLength).toBe(6_291_556);
    const over = await invoke('Echo', { padBytes: 6_291_547 });
    expect(over.StatusCode).toBe(200);
    expect(over.FunctionError).toBe('Unhandled');
    expect(json(over)).toEqual({
      errorType: 'Function.ResponseSizeTooLarge',
      errorMessage: 'Response payload size exceeded maximum allowed payload size (6291556 bytes).',
    });
    // The integration Step Functions uses fails with the same error type, which a Task's Catch sees.
    const viaStates = await invoke(LAMBDA_INVOKE_INTEGRATION, { FunctionName: echoArn, Payload: { padBytes: 6_291_547 } });
    expect(json(viaStates).errorType).toBe('Function.ResponseSizeTooLarge');
  });

  it('accepts an Event invocation whatever its result, since nobody receives it', async () => {
    const output = await invoke('Echo', { padBytes: 6_291_547 }, 'Event');
    expect(output.StatusCode).toBe(202);
  });

  it('refuses a request payload over 6 MB (synchronous) or 1 MB (Event) with RequestEntityTooLargeException', async () => {
    // {"x":"…"} is 8 bytes of JSON around the string.
    const body = (bytes: number) => ({ x: 'y'.repeat(bytes - 8) });
    await expect(invoke('Echo', body(6_291_457))).rejects.toMatchObject({
      name: 'RequestEntityTooLargeException',
      message: '6291457 byte payload is too large for the RequestResponse invocation type (limit 6291456 bytes)',
    });
    await expect(invoke('Echo', body(1_048_577), 'Event')).rejects.toMatchObject({
      name: 'RequestEntityTooLargeException',
      message: '1048577 byte payload is too large for the Event invocation type (limit 1048576 bytes)',
    });
    expect((await invoke('Echo', body(1_048_576), 'Event')).StatusCode).toBe(202);
  });

  it('counts invocations per function', () => {
    expect(endpoint.stats().EchoTwo).toMatchObject({ invocations: 2, errors: 1 });
  });

  it('refuses to start a function whose module does not follow the handler contract', async () => {
    const importModule = async () => ({ handler: async () => 'old style' });
    await expect(loadFunctions({ resolver, repoRoot: REPO_ROOT, importModule })).rejects.toThrow(HandlerLoadError);
    await expect(loadFunctions({ resolver, repoRoot: REPO_ROOT, importModule })).rejects.toThrow('must export depsFromEnv(env) and createHandler(deps)');
  });
});
