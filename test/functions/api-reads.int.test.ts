/**
 * The api's read routes through the handler over the pipeline's recorded ledger (GET /runs,
 * GET /runs/{runId}, GET /runs/{runId}/subtasks), so test/iam sees every ledger call the api
 * function sends, the run list index's Query included.
 */
import { describe, expect, it } from 'vitest';
import { RunList, SubtaskList } from '../../lib/contract';
import { uniqueName } from '../support/aws';
import { acceptRun, apiEvent, callApi, dispatchRound, halfYearRequest, pipeline } from './support';

const p = pipeline('fn-api-reads');

describe("the api's read routes", () => {
  it("list a tenant's runs, read one, and page its subtasks, each for that tenant only", async () => {
    const tenant = uniqueName('tenant');
    const runId = await acceptRun(p.get(), tenant, halfYearRequest());
    await dispatchRound(p.get(), tenant, runId);

    const list = await callApi(p.get(), { routeKey: 'GET /runs', tenant });
    expect(list.statusCode).toBe(200);
    expect(RunList.parse(list.body).runs.map((run) => run.runId)).toEqual([runId]);
    const running = await callApi(p.get(), { routeKey: 'GET /runs', tenant, query: { status: 'running' } });
    expect(RunList.parse(running.body).runs.map((run) => run.runId)).toEqual([runId]);
    const another = await callApi(p.get(), { routeKey: 'GET /runs', tenant: uniqueName('tenant') });
    expect(RunList.parse(another.body).runs).toEqual([]);

    const run = await callApi(p.get(), { routeKey: 'GET /runs/{runId}', tenant, runId });
    expect(run.statusCode).toBe(200);
    expect(typeof run.headers.etag).toBe('string');
    const unchanged = await p.get().api(apiEvent({ routeKey: 'GET /runs/{runId}', tenant, runId, headers: { 'if-none-match': String(run.headers.etag) } }));
    expect(unchanged).toMatchObject({ statusCode: 304 });

    const subtasks = await callApi(p.get(), { routeKey: 'GET /runs/{runId}/subtasks', tenant, runId });
    expect(subtasks.statusCode).toBe(200);
    expect(
      SubtaskList.parse(subtasks.body)
        .subtasks.map((s) => s.id)
        .sort(),
    ).toEqual(['A', 'B']);
  });
});
