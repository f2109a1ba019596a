import { IdempotencyKey, type RunAccepted } from '../contract';
import { withModels, type WorkerCatalog } from '../domain';
import type { ApiDeps } from './deps';
import { planRequest } from './plan-request';

/** A run request as the API received it: the tenant from the token, the body as text. */
export interface StartRunInput {
  readonly tenantId: string;
  readonly body: string;
  readonly idempotencyKey: string | undefined;
}

/** Why a request was refused before anything was written. */
export interface RunRequestRefused {
  readonly started: false;
  readonly code: 'InvalidJson' | 'InvalidIdempotencyKey' | 'InvalidRunRequest';
  readonly message: string;
  readonly problems?: readonly { readonly path: string; readonly code: string; readonly message: string }[];
}

export type StartRunResult = RunRequestRefused | { readonly started: true; readonly accepted: RunAccepted };

const parseJson = (text: string): { ok: true; value: unknown } | { ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
};

/**
 * Start a run: validate and plan (refused with every problem, nothing written), record the run
 * with its plan idempotently by its Idempotency-Key, and start the execution named after it. The 202 body
 * carries the planner's warnings (`capacity_short`: a kind cannot meet the plan's deadlines).
 *
 * @example
 * const result = await startRun(deps)({ tenantId: 'acme', body: '{"universe":…}', idempotencyKey: 'k-1' });
 */
export const startRun =
  (deps: Pick<ApiDeps, 'ledger' | 'executions' | 'catalog' | 'maxDeadlineSeconds' | 'capacity' | 'newRunId' | 'logger'>) =>
  async (input: StartRunInput): Promise<StartRunResult> => {
    const body = parseJson(input.body);
    if (!body.ok) return { started: false, code: 'InvalidJson', message: 'the request body is not valid JSON' };
    const key = input.idempotencyKey;
    if (key !== undefined && !IdempotencyKey.safeParse(key).success) {
      return { started: false, code: 'InvalidIdempotencyKey', message: 'Idempotency-Key must be 1-255 printable ASCII characters without spaces' };
    }
    const validation = planRequest(deps)(body.value);
    if (!validation.ok) {
      const count = validation.problems.length;
      return {
        started: false,
        code: 'InvalidRunRequest',
        message: `the run request has ${count} problem${count === 1 ? '' : 's'}`,
        problems: validation.problems,
      };
    }
    // Round 1 is stored as planned here: Dispatch appends exactly this plan and plans nothing.
    const { run, created } = await deps.ledger.createRun({
      tenantId: input.tenantId,
      runId: deps.newRunId(),
      request: validation.request,
      plan: validation.subtasks,
      plannedSubtasks: validation.subtasks.length,
      ...(key ? { idempotencyKey: key } : {}),
    });
    // Also on a replay: it heals a crash between recording the run and starting it.
    await deps.executions.start({ runId: run.runId, tenantId: input.tenantId });
    const { warnings } = validation;
    deps.logger.info('run accepted', {
      runId: run.runId,
      replay: !created,
      subtasks: validation.subtasks.length,
      warnings: warnings.map((w) => `${w.worker}:${w.code}`),
    });
    return { started: true, accepted: { runId: run.runId, status: run.status, location: `/runs/${run.runId}`, warnings } };
  };

/**
 * The registry's catalog, narrowed to the kinds deployed with a queue and the models the workers
 * allow, so a plan that names anything else is refused before anything is written.
 *
 * @example
 * deployedCatalog(registry.catalog(), ['tax-statements'], ['offline']).kinds() // ['tax-statements']
 */
export const deployedCatalog = (catalog: WorkerCatalog, deployed: readonly string[], models: readonly string[]): WorkerCatalog =>
  withModels(
    {
      get: (kind) => (deployed.includes(kind) ? catalog.get(kind) : undefined),
      kinds: () => catalog.kinds().filter((kind) => deployed.includes(kind)),
    },
    models,
  );
