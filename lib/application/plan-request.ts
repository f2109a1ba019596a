import { validateRunRequest, type ValidationResult } from '../domain';
import type { ApiDeps } from './deps';

/** What a request is planned against: the deployment's catalog, horizon and capacity. */
export type PlanDeps = Pick<ApiDeps, 'catalog' | 'maxDeadlineSeconds' | 'capacity'>;

/**
 * Validate and plan a run request as `POST /runs` does, writing nothing: `startRun` refuses with
 * exactly these problems, and MCP's `plan_run` answers with them.
 *
 * @example
 * const result = planRequest(deps)(JSON.parse(body));
 * if (!result.ok) result.problems[0].path; // 'subtasks.1.scope.from'
 */
export const planRequest =
  (deps: PlanDeps) =>
  (body: unknown): ValidationResult =>
    validateRunRequest(body, deps.catalog, {
      maxDeadlineSeconds: deps.maxDeadlineSeconds,
      ...(deps.capacity ? { capacity: deps.capacity } : {}),
    });
