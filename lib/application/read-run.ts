import type { RunResource } from '../contract';
import type { ApiDeps } from './deps';
import { readRunForm } from './list-subtasks';

/** A run of one tenant. */
export interface RunRef {
  readonly tenantId: string;
  readonly runId: string;
}

/**
 * Read a run as `GET /runs/{runId}` shows it without `?subtasks=`: a run past the paging
 * threshold with the first page of its subtasks (`shapeRun`), read without its other subtask
 * items (`readRunForm`); `undefined` when the tenant has no such run.
 *
 * @example
 * const run = await readRun(deps)({ tenantId: 'acme', runId });
 */
export const readRun =
  (deps: Pick<ApiDeps, 'ledger' | 'runForms'>) =>
  (ref: RunRef): Promise<RunResource | undefined> =>
    readRunForm(deps.ledger, ref, undefined, deps.runForms);
