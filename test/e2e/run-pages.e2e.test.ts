import { describe, expect, it } from 'vitest';
import { TesseraApiError } from '../../lib/client';
import { SubtaskList } from '../../lib/contract';
import { client, eventually, example, target } from './target';

/**
 * `GET /runs/{runId}/subtasks` and `?subtasks=none` through the HTTP API (the local cloud serves
 * the route from the synthesized template). One scout run, cancelled once its five subtasks are
 * dispatched; paging 23 subtasks and tampered cursors are the integration test's job
 * (test/functions/api-subtasks.int.test.ts).
 */
/** The scout example with ids whose id order (s-1, s-10, s-11, s-2, s-3) is not their dispatch order. */
const IDS = ['s-1', 's-2', 's-10', 's-11', 's-3'];

const raw = (path: string, tenant: 'acme' | 'globex' = 'acme') =>
  fetch(`${target().apiUrl.replace(/\/$/, '')}${path}`, { headers: { authorization: `Bearer ${target().tokens[tenant]}` } });

describe('a run read a page at a time', () => {
  it('lists the subtasks in id order, 2 a page, and the small form counts them without carrying them', { timeout: 120_000 }, async () => {
    const acme = client('acme');
    const request = example('scout');
    const { runId } = await acme.createRun({ ...request, subtasks: request.subtasks?.map((subtask, index) => ({ ...subtask, id: IDS[index] ?? subtask.id })) });
    const dispatched = await eventually(runId, (run) => run.progress.dispatched === 5, 60_000);
    expect(dispatched.subtasks.map((subtask) => subtask.id)).toEqual(IDS);
    await acme.cancelRun(runId).catch(() => undefined);

    const pages: string[][] = [];
    let cursor: string | undefined;
    do {
      const page = await acme.listSubtasks(runId, { limit: 2, ...(cursor === undefined ? {} : { cursor }) });
      pages.push(page.subtasks.map((subtask) => subtask.id));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(pages).toEqual([['s-1', 's-10'], ['s-11', 's-2'], ['s-3']]);

    const small = await acme.getRun(runId, { subtasks: 'none' });
    expect(small.modified && small.run.subtasks).toEqual([]);
    expect(small.modified && small.run.subtasksPage).toEqual({ returned: 0, total: 5, next: `/runs/${runId}/subtasks` });
    const first = SubtaskList.parse(await (await raw(`/runs/${runId}/subtasks`)).json());
    expect(first.subtasks.map((subtask) => subtask.id)).toEqual(['s-1', 's-10', 's-11', 's-2', 's-3']);

    const foreign = await client('globex')
      .listSubtasks(runId)
      .catch((error: unknown) => error);
    expect(foreign).toBeInstanceOf(TesseraApiError);
    expect((foreign as TesseraApiError).status).toBe(404);
    const badLimit = await raw(`/runs/${runId}/subtasks?limit=0`);
    expect(badLimit.status).toBe(400);
  });
});
