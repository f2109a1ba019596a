/**
 * How many subtasks a worker kind runs at once, named once for the construct (which sets each
 * kind's event source mapping and tells the api function through `ENV.workerCapacity`), the
 * local cloud (which runs the same template, so the same variable) and `tessera plan` (which has
 * no deployment and assumes the defaults). CDK-free.
 */

/** Subtask messages one worker invocation receives at once (the event source mapping's BatchSize). */
export const WORKER_BATCH_SIZE = 5;

/** Concurrency cap of a kind that does not set one (the event source mapping's MaximumConcurrency). */
export const DEFAULT_KIND_CONCURRENCY = 5;

/**
 * Subtasks one kind runs at once: its concurrent invocations times the batch each one receives.
 *
 * @example
 * kindCapacity() // 25: the defaults, 5 invocations × 5 messages
 */
export const kindCapacity = (maxConcurrency: number = DEFAULT_KIND_CONCURRENCY): number => maxConcurrency * WORKER_BATCH_SIZE;
