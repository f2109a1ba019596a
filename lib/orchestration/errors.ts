/** Errors of the Step Functions adapter. */

/** Base of the Step Functions adapter's errors; catch it to handle any of them. */
export class OrchestrationError extends Error {
  override readonly name: string = 'OrchestrationError';
}

/** The run's execution could not be started. */
export class ExecutionStartFailed extends OrchestrationError {
  override readonly name = 'ExecutionStartFailed';
  constructor(readonly runId: string, options?: ErrorOptions) {
    super(`could not start the execution of run ${runId}`, options);
  }
}

/**
 * Step Functions' names for a Lambda invocation that failed in the Lambda service, not in the
 * handler: Lambda's transient faults, which AWS recommends every Lambda task retry, and its
 * throttling (`TooManyRequestsException`, the account's or the function's concurrency).
 */
export const LAMBDA_SERVICE_ERRORS = [
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.ClientExecutionTimeoutException',
  'Lambda.TooManyRequestsException',
] as const;
