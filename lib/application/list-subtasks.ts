/**
 * `GET /runs/{runId}/subtasks`: a run's subtasks a page at a time, in id order, and the forms of
 * `GET /runs/{runId}` that carry a page of them (or none) with a link to the rest.
 *
 * The cursor names the subtask the page ended with, the run, and a tag of the tenant (as
 * `GET /runs` binds its cursor). It must decode, be this tenant's and this run's, and name a
 * committed subtask of the run, which the page's own Query proves (it starts at that subtask).
 * Anything else is refused with 400 naming `cursor`. Another tenant's run is 404, as on every
 * route: the ledger looks the run up inside the caller's tenant only.
 */
import { z } from 'zod';
import {
  PAGED_RUN_SUBTASKS,
  RunQuery,
  RunSubtasksForm,
  SUBTASK_PAGE_LIMITS,
  SubtaskId,
  SubtaskList,
  SubtaskListQuery,
  type RunResource,
  type SubtaskView,
  type SubtasksPage,
} from '../contract';
import { toPagedRunResource, toRunResource, toSubtaskViews, type Ledger } from '../ledger';
import { cursorProblem, decodeOpaque, encodeOpaque, tenantTag, type QueryProblem } from './cursor';

const CURSOR_VERSION = 1;

/** The decoded cursor: `t` the tenant tag, `r` the run, `a` the subtask the page ended with. */
const Cursor = z.strictObject({ v: z.literal(CURSOR_VERSION), t: z.string(), r: z.string().min(1).max(128), a: SubtaskId });
type Cursor = z.infer<typeof Cursor>;

/**
 * The cursor that resumes after subtask `after` of this tenant's run.
 *
 * @example
 * encodeSubtaskCursor('acme', 'r-1', 'B') // 'eyJ2IjoxLC…'
 */
export const encodeSubtaskCursor = (tenantId: string, runId: string, after: string): string =>
  encodeOpaque({ v: CURSOR_VERSION, t: tenantTag(tenantId), r: runId, a: after } satisfies Cursor);

/**
 * The path of a page of a run's subtasks: the first without a cursor.
 *
 * @example
 * subtasksPath('r-1') // '/runs/r-1/subtasks'
 */
export const subtasksPath = (runId: string, cursor?: string): string =>
  `/runs/${encodeURIComponent(runId)}/subtasks${cursor === undefined ? '' : `?cursor=${encodeURIComponent(cursor)}`}`;

/** The result of {@link listSubtasks}: a page, no such run, or the problems that refused the query. */
export type ListSubtasksResult =
  | { readonly kind: 'ok'; readonly list: SubtaskList }
  | { readonly kind: 'not_found' }
  | { readonly kind: 'invalid'; readonly problems: readonly QueryProblem[] };

/** A query as API Gateway passes it (a repeated parameter arrives joined with commas). */
type RawQuery = Readonly<Record<string, string | undefined>>;

const LIMIT_RULE = `must be a whole number from ${SUBTASK_PAGE_LIMITS.min} to ${SUBTASK_PAGE_LIMITS.max}`;

/** The problems of the query's values; parameters the route does not take are the router's to refuse. */
const queryProblems = (raw: RawQuery): QueryProblem[] => {
  const parsed = SubtaskListQuery.safeParse(raw);
  return parsed.success
    ? []
    : parsed.error.issues.map((issue): QueryProblem => {
        const path = String(issue.path[0] ?? 'query');
        return { path, code: issue.code, message: path === 'limit' ? LIMIT_RULE : issue.message };
      });
};

/** The subtask a cursor resumes after, or the problem; checked here as far as it can be without the ledger. */
const checkCursor = (tenantId: string, runId: string, text: string): string | QueryProblem => {
  const cursor = decodeOpaque(Cursor, text);
  if (cursor === undefined) return cursorProblem('is not a cursor this API returned');
  if (cursor.t !== tenantTag(tenantId)) return cursorProblem('was returned to another tenant');
  if (cursor.r !== runId) return cursorProblem('was returned for another run');
  return cursor.a;
};

/**
 * One page of a run's subtasks.
 *
 * @example
 * const result = await listSubtasks(ledger, { tenantId: 'acme', runId, query: { limit: '50' } });
 * if (result.kind === 'ok') for (const subtask of result.list.subtasks) console.log(subtask.id, subtask.state);
 */
export const listSubtasks = async (
  ledger: Ledger,
  input: { readonly tenantId: string; readonly runId: string; readonly query: RawQuery },
): Promise<ListSubtasksResult> => {
  const { tenantId, runId } = input;
  const problems = queryProblems(input.query);
  if (problems.length > 0) return { kind: 'invalid', problems };
  const { limit = SUBTASK_PAGE_LIMITS.default, cursor } = SubtaskListQuery.parse(input.query);
  const after = cursor === undefined ? undefined : checkCursor(tenantId, runId, cursor);
  if (typeof after === 'object') return { kind: 'invalid', problems: [after] };
  const read = await ledger.subtaskPage({ tenantId, runId, limit, ...(after === undefined ? {} : { after }) });
  if (read.kind === 'not_found') return read;
  if (read.kind === 'unknown_position') return { kind: 'invalid', problems: [cursorProblem('is not a cursor this API returned')] };
  const last = read.subtasks.at(-1);
  const nextCursor = read.more && last !== undefined ? encodeSubtaskCursor(tenantId, runId, last.subtaskId) : undefined;
  return {
    kind: 'ok',
    list: SubtaskList.parse({ subtasks: toSubtaskViews(read.subtasks, read.late, read.copies), ...(nextCursor === undefined ? {} : { nextCursor }) }),
  };
};

/**
 * The `GET /runs/{runId}/subtasks` use case, built from its dependencies.
 *
 * @example
 * const list = listSubtaskPage(deps); await list({ tenantId: 'acme', runId, query: { limit: '100' } });
 */
export const listSubtaskPage =
  (deps: { readonly ledger: Ledger }) =>
  (input: { readonly tenantId: string; readonly runId: string; readonly query: RawQuery }): Promise<ListSubtasksResult> =>
    listSubtasks(deps.ledger, input);

/** Which subtasks a run resource carries: all of them, the first page, or none. */
export type RunForm = 'all' | RunSubtasksForm;

/** When a run resource is paged, and how many subtasks its first page holds. */
export interface RunFormOptions {
  /** A run with more subtasks than this carries only its first page. @default PAGED_RUN_SUBTASKS */
  readonly pagedAbove?: number;
  /** @default SUBTASK_PAGE_LIMITS.default */
  readonly pageSize?: number;
}

/**
 * The `?subtasks=` of `GET /runs/{runId}`: the form asked for (`undefined`: the default), or the
 * problem naming `subtasks`. Other parameters are refused by the router before this runs.
 *
 * @example
 * runFormOf({ subtasks: 'none' }) // 'none'
 */
export const runFormOf = (query: RawQuery): RunSubtasksForm | undefined | QueryProblem => {
  const parsed = RunQuery.safeParse({ subtasks: query.subtasks });
  if (parsed.success) return parsed.data.subtasks;
  return { path: 'subtasks', code: 'invalid_value', message: `must be one of ${RunSubtasksForm.options.join(', ')}` };
};

const byId = (a: { id: string }, b: { id: string }): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** `subtasksPage` of a resource holding `page` (the first subtasks in id order) of `total`, `more` when others follow. */
const subtasksPageOf = (tenantId: string, runId: string, total: number, page: readonly SubtaskView[], more: boolean): SubtasksPage => {
  const last = page.at(-1);
  if (page.length === 0) return { returned: 0, total, ...(total === 0 ? {} : { next: subtasksPath(runId) }) };
  const next = more && last !== undefined ? subtasksPath(runId, encodeSubtaskCursor(tenantId, runId, last.id)) : undefined;
  return { returned: page.length, total, ...(next === undefined ? {} : { next }) };
};

/**
 * A run resource in the form asked for. Without a form, a run at or under `pagedAbove` subtasks
 * is the whole resource, unchanged; a larger one, or `page`, carries the first page of its
 * subtasks in id order (the same page `GET /runs/{runId}/subtasks` starts with) and
 * `subtasksPage`; `none` carries no subtasks and links the first page.
 *
 * @example
 * shapeRun(resource, 'acme', 'none').subtasksPage // { returned: 0, total: 4, next: '/runs/r-1/subtasks' }
 */
export const shapeRun = (resource: RunResource, tenantId: string, form: RunSubtasksForm | undefined, options: RunFormOptions = {}): RunResource => {
  const pagedAbove = options.pagedAbove ?? PAGED_RUN_SUBTASKS;
  const pageSize = options.pageSize ?? SUBTASK_PAGE_LIMITS.default;
  const total = resource.subtasks.length;
  if (form === undefined && total <= pagedAbove) return resource;
  const page = form === 'none' ? [] : [...resource.subtasks].sort(byId).slice(0, pageSize);
  return { ...resource, subtasks: page, subtasksPage: subtasksPageOf(tenantId, resource.runId, total, page, total > page.length) };
};

/**
 * A run resource in the form asked for ({@link shapeRun}), reading no more of the run than the
 * form shows: a run the form shows whole is read whole; any other is read without its subtask
 * items (its progress from their states only, and the one page it shows), so a 10,000-subtask
 * run answers in the time of a page. `undefined` when the tenant has no such run.
 *
 * @example
 * const run = await readRunForm(ledger, { tenantId: 'acme', runId }, 'none'); // run?.subtasksPage.total
 */
export const readRunForm = async (
  ledger: Ledger,
  ref: { readonly tenantId: string; readonly runId: string },
  form: RunSubtasksForm | undefined,
  options: RunFormOptions = {},
): Promise<RunResource | undefined> => {
  const pagedAbove = options.pagedAbove ?? PAGED_RUN_SUBTASKS;
  const pageSize = options.pageSize ?? SUBTASK_PAGE_LIMITS.default;
  const read = await ledger.getRunPage({ ...ref, limit: form === 'none' ? 0 : pageSize, ...(form === undefined ? { wholeUpTo: pagedAbove } : {}) });
  if (read === undefined) return undefined;
  if (read.kind === 'whole') return shapeRun(toRunResource(read.record), ref.tenantId, form, options);
  const resource = toPagedRunResource(read.record);
  const more = read.record.page?.more ?? false;
  return { ...resource, subtasksPage: subtasksPageOf(ref.tenantId, ref.runId, read.record.progress.dispatched, resource.subtasks, more) };
};
