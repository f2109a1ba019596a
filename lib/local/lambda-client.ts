import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { LocalCloudError } from './errors';
import { FunctionErrorPayload } from './lambda-runtime';

/**
 * How the emulated AWS services (event-source mappings, the HTTP API, Step Functions callbacks)
 * invoke functions: through the local Lambda endpoint with the real SDK, as AWS services call
 * Lambda, so every invocation crosses the same wire format and is counted in one place.
 */

/** The function's JSON result, or its error document when Lambda reported a function error. */
export type InvokeResult = { readonly ok: true; readonly payload: unknown } | { readonly ok: false; readonly error: FunctionErrorPayload };

/** Invokes functions by name or ARN, as an AWS service would. */
export interface LambdaInvoker {
  /** `Event` invocations resolve once Lambda has accepted them, with a `null` payload. */
  invoke(functionName: string, payload: unknown, options?: { invocationType?: 'RequestResponse' | 'Event' }): Promise<InvokeResult>;
}

/**
 * Local credentials: the emulators accept any.
 *
 * @example
 * new SQSClient({ endpoint, region, credentials: LOCAL_CREDENTIALS })
 */
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

const decode = (bytes: Uint8Array | undefined): unknown => {
  const text = bytes ? new TextDecoder().decode(bytes) : '';
  if (text === '') return null;
  const value: unknown = JSON.parse(text);
  return value;
};

/** A function error whose document is not Lambda's shape is still reported, never dropped. */
const functionError = (payload: unknown): FunctionErrorPayload => {
  const parsed = FunctionErrorPayload.safeParse(payload);
  return parsed.success ? parsed.data : { errorType: 'Unhandled', errorMessage: JSON.stringify(payload) };
};

/**
 * An invoker bound to one Lambda endpoint.
 *
 * @example
 * const lambda = createLambdaInvoker({ endpoint: 'http://127.0.0.1:4001', region: 'us-east-1' });
 * const result = await lambda.invoke('Worker', { Records: [] });
 */
export const createLambdaInvoker = (options: { endpoint: string; region: string }): LambdaInvoker => {
  const client = new LambdaClient({ endpoint: options.endpoint, region: options.region, credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
  return {
    invoke: async (functionName, payload, invokeOptions = {}) => {
      let response;
      try {
        response = await client.send(
          new InvokeCommand({
            FunctionName: functionName,
            InvocationType: invokeOptions.invocationType ?? 'RequestResponse',
            Payload: new TextEncoder().encode(JSON.stringify(payload)),
          }),
        );
      } catch (error) {
        throw new LocalCloudError(`invoking ${functionName} through the local Lambda endpoint failed: ${(error as Error).message}`, { cause: error });
      }
      const body = decode(response.Payload);
      return response.FunctionError ? { ok: false, error: functionError(body) } : { ok: true, payload: body };
    },
  };
};
