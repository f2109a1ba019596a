import type { RunResource } from '../contract';
import { toRunResource } from '../ledger';
import type { ApiDeps } from './deps';
import { shapeRun } from './list-subtasks';

/** A run of one tenant. */
export interface RunRef {
  readonly tenantId: string;
  readonly runId: string;
}

/**
 * Read a run as `GET /runs/{runId}` shows it without `?subtasks=`: a run past the paging
 * threshold with the first page of its subtasks (`shapeRun`); `undefined` when the tenant has no
 * such run.
 *
 * @example
 * const run = await readRun(deps)({ tenantId: 'acme', runId });
 */
export const readRun =
  (deps: Pick<ApiDeps, 'ledger' | 'runForms'>) =>
  async (ref: RunRef): Promise<RunResource | undefined> => {
    const record = await deps.ledger.getRun(ref.tenantId, ref.runId);
    return record ? shapeRun(toRunResource(record), ref.tenantId, undefined, deps.runForms) : undefined;
  };
