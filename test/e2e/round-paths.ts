/**
 * The round settings of the end-to-end suite's deployment (the local cloud of
 * test/e2e/global-setup.ts, and the emulator lane's stack): batches of 5, and at most 10 subtasks
 * on a run's inline Map, so a run of a few dozen subtasks exercises the batched path
 * (docs/deadlines.md, "Runs past one execution's history") across several child executions.
 */
export const E2E_ROUND_PATHS = { batchSubtasks: 5, inlineSubtasks: 10 } as const;
