/**
 * The api function's use cases, one per route. Imported from here rather than from a barrel of
 * every use case, so the api's bundle keeps out the worker SDK's model adapters (the Bedrock client).
 */
export type { ApiDeps } from './deps';
export { cancelRun, type CancelRunResult } from './cancel-run';
export { readRun, type RunRef } from './read-run';
export { deployedCatalog, startRun, type RunRequestRefused, type StartRunInput, type StartRunResult } from './start-run';
export { listRunPage, type ListRunsResult } from './list-runs';
export { listSubtaskPage, runFormOf, type ListSubtasksResult, type RunFormOptions } from './list-subtasks';
export { followRun, type WatchRequest, type WatchResult } from './watch-run';
