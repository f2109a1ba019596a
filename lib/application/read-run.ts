import type { RunResource } from '../contract';
import { toRunResource } from '../ledger';
import type { ApiDeps } from './deps';

/** A run of one tenant. */
export interface RunRef {
  readonly tenantId: string;
  readonly runId: string;
}

/**
 * Read a run as `GET /runs/{runId}` shows it; `undefined` when the tenant has no such run.
 *
 * @example
 * const run = await readRun(deps)({ tenantId: 'acme', runId });
 */
export const readRun =
  (deps: Pick<ApiDeps, 'ledger'>) =>
  async (ref: RunRef): Promise<RunResource | undefined> => {
    const record = await deps.ledger.getRun(ref.tenantId, ref.runId);
    return record ? toRunResource(record) : undefined;
  };
