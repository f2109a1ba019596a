/** Errors of the Step Functions adapter. */

/** Base of the Step Functions adapter's errors; catch it to handle any of them. */
export class OrchestrationError extends Error {
  override readonly name: string = 'OrchestrationError';
}

/** The run's execution could not be started. */
export class ExecutionStartFailed extends OrchestrationError {
  override readonly name = 'ExecutionStartFailed';
  constructor(
    readonly runId: string,
    options?: ErrorOptions,
  ) {
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

/**
 * Step Functions' names for a `startExecution` Task whose start was refused: the account's quota
 * of open executions (`ExecutionLimitExceeded`), and the StartExecution API's throttling, which
 * the integration reports as `AWSStepFunctionsException`. StartBatch retries these. A child that
 * started and then failed reports `States.TaskFailed` instead, and is not retried: a child's name
 * is its batch's, and a closed execution's name cannot start again.
 */
export const START_EXECUTION_REFUSED_ERRORS = ['StepFunctions.ExecutionLimitExceeded', 'StepFunctions.AWSStepFunctionsException'] as const;
