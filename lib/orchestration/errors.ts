/** Errors of the Step Functions adapter. */

export class OrchestrationError extends Error {
  override readonly name: string = 'OrchestrationError';
}

/** The run's execution could not be started. */
export class ExecutionStartFailed extends OrchestrationError {
  override readonly name = 'ExecutionStartFailed';
  constructor(readonly runId: string, options?: { cause?: unknown }) {
    super(`could not start the execution of run ${runId}`, options);
  }
}
