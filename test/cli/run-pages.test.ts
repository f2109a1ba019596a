import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createTesseraClient } from '../../lib/client';
import { RUN_EXIT, submitAndReport } from '../../lib/cli/run';
import type { CliIo } from '../../lib/cli/router';
import type { RunResource } from '../../lib/contract';
import { taxRun } from '../web/fixtures';

/**
 * A large run's resource carries only the first page of its subtasks: the client pages through
 * the rest (`listSubtasks`, `allSubtasks`), and `tessera run` still prints every subtask.
 */

/** The tax run as a paged resource: A and B (the first two in id order), then B.g1 and C, then D. */
const run = taxRun();
const byId = (id: string) => run.subtasks.find((subtask) => subtask.id === id);
const PAGES: Record<string, { ids: string[]; next?: string }> = {
  '': { ids: ['A', 'B'], next: 'c1' },
  c1: { ids: ['B.g1', 'C'], next: 'c2' },
  c2: { ids: ['D'] },
};
const paged: RunResource = {
  ...run,
  subtasks: ['A', 'B'].map((id) => byId(id)!),
  subtasksPage: { returned: 2, total: 5, next: `/runs/${run.runId}/subtasks?cursor=c1` },
};

/** A real API on 127.0.0.1 serving the paged run and its pages; it records every request path. */
const fakeApi = async (): Promise<{ server: Server; url: string; paths: string[] }> => {
  const paths: string[] = [];
  const server = createServer((request, response) => {
    paths.push(request.url ?? '');
    const url = new URL(request.url ?? '/', 'http://api');
    const send = (status: number, body: unknown) => response.writeHead(status, { 'content-type': 'application/json', etag: '"t1"' }).end(JSON.stringify(body));
    if (request.method === 'POST') return send(202, { runId: run.runId, status: 'running', location: `/runs/${run.runId}` });
    if (url.pathname === `/runs/${run.runId}`) return send(200, paged);
    const page = PAGES[url.searchParams.get('cursor') ?? ''];
    if (url.pathname !== `/runs/${run.runId}/subtasks` || page === undefined) return send(404, { error: { code: 'RunNotFound', message: 'no such run' } });
    return send(200, { subtasks: page.ids.map((id) => byId(id)), ...(page.next === undefined ? {} : { nextCursor: page.next }) });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths };
};

describe('a paged run resource', () => {
  let server: Server | undefined;
  afterEach(() => new Promise((resolve) => (server?.listening ? server.close(resolve) : resolve(undefined))));

  it('is read page by page by the client: listSubtasks sends limit and cursor, allSubtasks follows nextCursor to the end', async () => {
    const api = await fakeApi();
    server = api.server;
    const client = createTesseraClient({ apiUrl: api.url, token: 't' });

    expect(await client.listSubtasks(run.runId, { limit: 2, cursor: 'c1' })).toEqual({ subtasks: [byId('B.g1'), byId('C')], nextCursor: 'c2' });
    const all: string[] = [];
    for await (const subtask of client.allSubtasks(run.runId, { limit: 2 })) all.push(subtask.id);
    expect(all).toEqual(['A', 'B', 'B.g1', 'C', 'D']);
    await client.getRun(run.runId, { subtasks: 'none' });
    expect(api.paths).toEqual([
      `/runs/${run.runId}/subtasks?limit=2&cursor=c1`,
      `/runs/${run.runId}/subtasks?limit=2`,
      `/runs/${run.runId}/subtasks?limit=2&cursor=c1`,
      `/runs/${run.runId}/subtasks?limit=2&cursor=c2`,
      `/runs/${run.runId}?subtasks=none`,
    ]);
  });

  it('is printed by tessera run with every subtask, round by round', async () => {
    const api = await fakeApi();
    server = api.server;
    const out: string[] = [];
    const io: CliIo = { out: (text) => void out.push(text), err: () => undefined, readText: async () => '' };
    const code = await submitAndReport(io, createTesseraClient({ apiUrl: api.url, token: 't' }), {}, { json: false, apiUrl: api.url, local: true });

    expect(code).toBe(RUN_EXIT.succeeded);
    const rows = (out[0] ?? '').split('\n');
    const table = rows
      .slice(rows.indexOf('Subtasks') + 2)
      .filter((line) => /^ {2}\S/.test(line))
      .map((line) => line.trim().split(/\s+/)[0]);
    expect(table.slice(0, 5)).toEqual(['A', 'B', 'C', 'D', 'B.g1']);
  });
});
