/** Errors of the SQS adapter. */

/** Base of the SQS adapter's errors; catch it to handle any of them. */
export class QueueError extends Error {
  override readonly name: string = 'QueueError';
}

/** No queue is configured for a worker kind: the deployment and the plan disagree. */
export class NoQueueForWorker extends QueueError {
  override readonly name = 'NoQueueForWorker';
  constructor(
    readonly worker: string,
    readonly configured: readonly string[],
    options?: ErrorOptions,
  ) {
    super(`no queue is configured for worker kind "${worker}" (configured: ${configured.join(', ') || 'none'})`, options);
  }
}

/**
 * Names of the queue errors worth another attempt a little later (`EnqueueFailed`). A Step
 * Functions task that fails with one of them is retried; the state machine imports this list.
 */
export const TRANSIENT_QUEUE_ERRORS = ['EnqueueFailed'] as const;

/** Some messages could not be sent after retrying; the caller (a Step Functions task) retries the whole step. */
export class EnqueueFailed extends QueueError {
  override readonly name = TRANSIENT_QUEUE_ERRORS[0];
  constructor(
    readonly subtaskIds: readonly string[],
    readonly codes: readonly string[],
    options?: ErrorOptions,
  ) {
    super(`could not enqueue ${subtaskIds.length} subtask(s): ${subtaskIds.slice(0, 10).join(', ')} (${[...new Set(codes)].join(', ')})`, options);
  }
}
