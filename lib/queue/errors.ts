/** Errors of the SQS adapter. */

export class QueueError extends Error {
  override readonly name: string = 'QueueError';
}

/** No queue is configured for a worker kind: the deployment and the plan disagree. */
export class NoQueueForWorker extends QueueError {
  override readonly name = 'NoQueueForWorker';
  constructor(readonly worker: string, readonly configured: readonly string[]) {
    super(`no queue is configured for worker kind "${worker}" (configured: ${configured.join(', ') || 'none'})`);
  }
}

/** Some messages could not be sent after retrying; the caller (a Step Functions task) retries the whole step. */
export class EnqueueFailed extends QueueError {
  override readonly name = 'EnqueueFailed';
  constructor(readonly subtaskIds: readonly string[], readonly codes: readonly string[], options?: { cause?: unknown }) {
    super(`could not enqueue ${subtaskIds.length} subtask(s): ${subtaskIds.slice(0, 10).join(', ')} (${[...new Set(codes)].join(', ')})`, options);
  }
}
