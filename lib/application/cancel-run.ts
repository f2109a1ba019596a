import type { RunResource, RunStatus } from '../contract';
import type { ApiDeps } from './deps';
import { readRun, type RunRef } from './read-run';

export type CancelRunResult = { readonly cancelled: true; readonly run: RunResource | undefined } | { readonly cancelled: false; readonly status: RunStatus };

/**
 * Cancel a run inside the API's request, in a bounded number of calls whatever the run's size:
 * one conditional write records the cancellation on the run item (from then on the ledger refuses
 * the run's reservations and outcomes), one read takes the answer from it, then one StopExecution
 * ends its execution and every Map iteration waiting in it. The execution's end closes the run
 * (reconcile, through the execution status rule): it writes the answer, which states the
 * cancellation, and then sweeps the subtasks still open to `cancelled` (docs/architecture.md,
 * "Cancelling a run"). A run that already ended is left as it is; a repeated cancel stops the
 * execution again, which finishes a cancel interrupted between its two calls. The answer is the run as `GET /runs/{runId}` shows
 * it (a large run with the first page of its subtasks), its open subtasks shown cancelled.
 *
 * @example
 * const result = await cancelRun(deps)({ tenantId: 'acme', runId }); // { cancelled: true, run }
 */
export const cancelRun =
  (deps: Pick<ApiDeps, 'ledger' | 'executions' | 'logger' | 'runForms'>) =>
  async (ref: RunRef): Promise<CancelRunResult> => {
    const cancelled = await deps.ledger.cancelRun(ref.tenantId, ref.runId);
    if (cancelled.status !== 'cancelled') return { cancelled: false, status: cancelled.status };
    // Read before the stop: the run item already says cancelled, so the read shows its open
    // subtasks cancelled, and it does not compete with the closing the stop sets off (reconcile
    // reading the manifest, writing the answer, sweeping the subtasks) for the same table.
    const run = await readRun(deps)(ref);
    // A run already answered has no execution left running.
    const stopped = cancelled.answered ? { stopped: false } : await deps.executions.stop(ref.runId);
    deps.logger.info('run cancelled', { runId: ref.runId, answered: cancelled.answered, ...stopped });
    return { cancelled: true, run };
  };
