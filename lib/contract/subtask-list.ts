import { z } from 'zod';
import { MAX_CURSOR_LENGTH } from './run-list';
import { SubtaskView } from './run-resource';

/**
 * `GET /runs/{runId}/subtasks`: a run's subtasks a page at a time, and the forms of
 * `GET /runs/{runId}` that carry a page of them (or none) instead of all. See docs/api.md
 * ("Large runs: subtasks a page at a time").
 */

/** Subtasks per page when `limit` is not given (also the page a paged run resource carries), and the most a page may hold. */
export const SUBTASK_PAGE_LIMITS = { default: 100, min: 1, max: 1000 } as const;

/**
 * A run with more subtasks than this is answered by `GET /runs/{runId}` with the first page of its
 * subtasks and `subtasksPage`, never with all of them (10,000 subtasks would pass Lambda's 6 MB
 * response limit). Every run MAX_SUBTASKS allowed before paging existed is at or under it.
 */
export const PAGED_RUN_SUBTASKS = 1000;

/**
 * `?subtasks=` of `GET /runs/{runId}`: `page`, the first page of subtasks and a link to the next;
 * `none`, no subtasks (counts, coverage and answer only) and a link to the first page. Without it,
 * every subtask of a run at or under {@link PAGED_RUN_SUBTASKS}, the first page of a larger one.
 */
export const RunSubtasksForm = z.enum(['page', 'none']);
export type RunSubtasksForm = z.infer<typeof RunSubtasksForm>;

/** The query of `GET /runs/{runId}`; any other parameter is refused (`ROUTE_QUERY_PARAMETERS`). */
export const RunQuery = z.object({ subtasks: RunSubtasksForm.optional() });
export type RunQuery = z.infer<typeof RunQuery>;

/** The query of `GET /runs/{runId}/subtasks`; a value that breaks its rule is answered 400 naming the parameter. */
export const SubtaskListQuery = z.object({
  limit: z
    .string()
    .regex(/^[0-9]{1,4}$/, `must be a whole number from ${SUBTASK_PAGE_LIMITS.min} to ${SUBTASK_PAGE_LIMITS.max}`)
    .transform(Number)
    .pipe(z.int().min(SUBTASK_PAGE_LIMITS.min).max(SUBTASK_PAGE_LIMITS.max))
    .optional(),
  cursor: z.string().min(1, 'must not be empty').max(MAX_CURSOR_LENGTH, `must be at most ${MAX_CURSOR_LENGTH} characters`).optional(),
});
export type SubtaskListQuery = z.infer<typeof SubtaskListQuery>;

/** `200` body of `GET /runs/{runId}/subtasks`: subtasks in id order; `nextCursor` is present while more follow. */
export const SubtaskList = z
  .object({
    subtasks: z.array(SubtaskView).describe('Subtasks in id order.'),
    nextCursor: z.string().optional().describe('Present while more follow: pass it as cursor.'),
  })
  .describe('200 body of GET /runs/{runId}/subtasks.');
export type SubtaskList = z.infer<typeof SubtaskList>;
