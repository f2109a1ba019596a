/**
 * The application layer: the use cases of tessera's functions, each built from its dependencies
 * (`useCase(deps)(input)`), between the handlers in functions/ and the adapters (ledger, queue,
 * orchestration, workers). See docs/architecture.md.
 */
export type { ApiDeps, DeadlineDeps, DispatchDeps, ReconcileDeps, WorkerDeps } from './deps';
export { startRun, deployedCatalog, type StartRunInput, type StartRunResult, type RunRequestRefused } from './start-run';
export { readRun, type RunRef } from './read-run';
export { cancelRun, type CancelRunResult } from './cancel-run';
export { dispatchRound, dispatchedAt, RoundRef, type DispatchedRound } from './dispatch-round';
export { deadlineStep, DeadlineStep, type ArmResult } from './deadline-steps';
export { runDeliveries, LATE_GRACE_MS, NOTHING_TO_DO, KEPT_LATE } from './run-delivery';
export { reconcileRun, ReconcileEvent, type ReconcileResult } from './close-run';
export { processPartialBatch, type RecordResult } from './batch';
