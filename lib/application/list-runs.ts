/**
 * `GET /runs`: one page of the caller's tenant's runs, newest first, with an opaque cursor.
 *
 * The cursor names the position the page ended on (the last run's creation time and id), the
 * filter it was minted for, and a tag of the tenant. It carries no secret, so it is checked
 * against the ledger instead: it must decode, match this request's filter and tenant, and name
 * one of this tenant's runs created exactly then. Anything else is refused with 400. A cursor
 * can never reach another tenant's runs in any case: every Query is inside the caller's own
 * partitions of the run list index.
 */
import { z } from 'zod';
import { RUN_LIST_LIMITS, RunListQuery, RunStatus, type RunList } from '../contract';
import type { Ledger, RunListPosition } from '../ledger';
import { cursorProblem, decodeOpaque, encodeOpaque, tenantTag, type QueryProblem } from './cursor';

export type { QueryProblem } from './cursor';

/** The result of {@link listRuns}: a page, or the problems that refused the query. */
export type ListRunsResult = { readonly ok: true; readonly list: RunList } | { readonly ok: false; readonly problems: readonly QueryProblem[] };

const CURSOR_VERSION = 1;

/** The decoded cursor. `s` is the status filter (`*` for none), `t` the tenant tag. */
const Cursor = z.strictObject({
  v: z.literal(CURSOR_VERSION),
  t: z.string(),
  s: z.union([RunStatus, z.literal('*')]),
  c: z.iso.datetime(),
  r: z.string().min(1).max(128),
});
type Cursor = z.infer<typeof Cursor>;

/**
 * The cursor that resumes after `position` for this tenant and filter.
 *
 * @example
 * encodeCursor('acme', undefined, { createdAt: '2025-06-01T12:00:00.000Z', runId: 'r-1' }) // 'eyJ2IjoxLC…'
 */
export const encodeCursor = (tenantId: string, status: RunStatus | undefined, position: RunListPosition): string =>
  encodeOpaque({ v: CURSOR_VERSION, t: tenantTag(tenantId), s: status ?? '*', c: position.createdAt, r: position.runId } satisfies Cursor);

/** Checks a cursor against this request; the position it names, or the problem. */
const checkCursor = async (ledger: Ledger, tenantId: string, status: RunStatus | undefined, text: string): Promise<RunListPosition | QueryProblem> => {
  const cursor = decodeOpaque(Cursor, text);
  if (cursor === undefined) return cursorProblem('is not a cursor this API returned');
  if (cursor.t !== tenantTag(tenantId)) return cursorProblem('was returned to another tenant');
  if (cursor.s !== (status ?? '*')) {
    return cursorProblem(
      `was returned for ${cursor.s === '*' ? 'all statuses' : `status=${cursor.s}`}; repeat that filter with it, or start again without a cursor`,
    );
  }
  const createdAt = await ledger.runCreatedAt(tenantId, cursor.r);
  if (createdAt !== cursor.c) return cursorProblem('is not a cursor this API returned');
  return { createdAt: cursor.c, runId: cursor.r };
};

/** The problems of the query's values, each naming its parameter. */
const queryProblems = (raw: Readonly<Record<string, string | undefined>>): QueryProblem[] => {
  const parsed = RunListQuery.safeParse(raw);
  return parsed.success
    ? []
    : parsed.error.issues.map((issue): QueryProblem => {
        const path = String(issue.path[0] ?? 'query');
        const message =
          path === 'status'
            ? `must be one of ${RunStatus.options.join(', ')}`
            : path === 'limit'
              ? `must be a whole number from ${RUN_LIST_LIMITS.min} to ${RUN_LIST_LIMITS.max}`
              : issue.message;
        return { path, code: issue.code, message };
      });
};

/**
 * One page of the tenant's runs. `query` is the request's query string as API Gateway passes it
 * (a repeated parameter arrives joined with commas, which no valid value contains). Parameters the
 * route does not take are refused by the router before this runs (`ROUTE_QUERY_PARAMETERS`).
 *
 * @example
 * const result = await listRuns(ledger, 'acme', { status: 'running', limit: '50' });
 * if (result.ok) for (const run of result.list.runs) console.log(run.runId, run.progress.terminal);
 */
export const listRuns = async (ledger: Ledger, tenantId: string, query: Readonly<Record<string, string | undefined>> = {}): Promise<ListRunsResult> => {
  const problems = queryProblems(query);
  if (problems.length > 0) return { ok: false, problems };
  const { status, limit = RUN_LIST_LIMITS.default, cursor } = RunListQuery.parse(query);
  let after: RunListPosition | undefined;
  if (cursor !== undefined) {
    const checked = await checkCursor(ledger, tenantId, status, cursor);
    if ('path' in checked) return { ok: false, problems: [checked] };
    after = checked;
  }
  const page = await ledger.listRuns({ tenantId, limit, ...(status === undefined ? {} : { status }), ...(after === undefined ? {} : { after }) });
  return { ok: true, list: { runs: [...page.runs], ...(page.last === undefined ? {} : { nextCursor: encodeCursor(tenantId, status, page.last) }) } };
};

/**
 * The `GET /runs` use case, built from its dependencies: a page of the caller's runs.
 *
 * @example
 * const list = listRunPage(deps); await list({ tenantId: 'acme', query: { limit: '20' } });
 */
export const listRunPage =
  (deps: { readonly ledger: Ledger }) =>
  (input: { readonly tenantId: string; readonly query: Readonly<Record<string, string | undefined>> }): Promise<ListRunsResult> =>
    listRuns(deps.ledger, input.tenantId, input.query);
