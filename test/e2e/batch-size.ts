/**
 * Subtasks per batch in the end-to-end suite's deployment (the local cloud of
 * test/e2e/global-setup.ts, and the emulator lane's stack): batches of 5, so a run of a few dozen
 * subtasks runs its rounds across several child executions (docs/deadlines.md, "One round path").
 */
export const E2E_BATCH_SUBTASKS = 5;
