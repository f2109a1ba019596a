import type { RunResource, RunStatus } from '../contract';
import { releaseAll } from '../orchestration/run-execution';
import type { ApiDeps } from './deps';
import { readRun, type RunRef } from './read-run';

export type CancelRunResult = { readonly cancelled: true; readonly run: RunResource | undefined } | { readonly cancelled: false; readonly status: RunStatus };

/**
 * Cancel a run: finished outcomes stay, the rest become `cancelled`, and the Map iterations
 * waiting on them are released. A run that already ended is left as it is. The answer is the run
 * as `GET /runs/{runId}` shows it (a large run with the first page of its subtasks).
 *
 * @example
 * const result = await cancelRun(deps)({ tenantId: 'acme', runId }); // { cancelled: true, run }
 */
export const cancelRun =
  (deps: Pick<ApiDeps, 'ledger' | 'executions' | 'logger' | 'runForms'>) =>
  async (ref: RunRef): Promise<CancelRunResult> => {
    const closed = await deps.ledger.cancelRun(ref.tenantId, ref.runId);
    if (closed.status !== 'cancelled') return { cancelled: false, status: closed.status };
    // A bounded number of SendTaskSuccess calls at once, however many iterations wait.
    const released = await releaseAll(deps.executions, closed.taskTokens, { cancelled: true });
    deps.logger.info('run cancelled', { runId: ref.runId, closed: closed.cancelledSubtaskIds.length, ...released });
    return { cancelled: true, run: await readRun(deps)(ref) };
  };
