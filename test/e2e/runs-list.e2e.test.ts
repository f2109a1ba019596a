import { describe, expect, it } from 'vitest';
import { TesseraApiError } from '../../lib/client';
import type { RunSummary } from '../../lib/contract';
import { client, example, target } from './target';

/**
 * GET /runs, ETags and the long-poll through the HTTP API. Eight runs, each cancelled as soon as
 * it is accepted (so the local cloud runs none of them to the end), keep this file's added wall
 * time under a minute on two idle cores; paging 250 runs is the integration test's job
 * (test/ledger/run-list.int.test.ts).
 */
const RUNS = 8;

const raw = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${target().apiUrl.replace(/\/$/, '')}${path}`, { headers: { authorization: `Bearer ${target().tokens.acme}`, ...headers } });

describe('GET /runs', () => {
  it('pages through the tenant’s runs newest first, with no duplicates, and another tenant sees none of them', { timeout: 240_000 }, async () => {
    const acme = client('acme');
    const created: string[] = [];
    // One after another, so their creation order is known.
    for (let index = 0; index < RUNS; index += 1) {
      const { runId } = await acme.createRun({ ...example('scout'), goal: `list test ${index}` });
      created.push(runId);
      await acme.cancelRun(runId).catch(() => undefined);
    }
    const listed: RunSummary[] = [];
    let pages = 0;
    for await (const run of acme.allRuns({ limit: 3 })) {
      listed.push(run);
      pages = Math.ceil(listed.length / 3);
    }
    const ids = listed.map((run) => run.runId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(pages).toBeGreaterThanOrEqual(Math.ceil(RUNS / 3));
    // Other files of the suite create runs too: ours appear among them, newest first.
    expect(ids.filter((id) => created.includes(id))).toEqual([...created].reverse());
    const mine = listed.find((run) => run.runId === created[0]);
    expect(mine).toMatchObject({ goal: 'list test 0', status: 'cancelled', progress: { dispatched: expect.any(Number) } });
    const theirs: string[] = [];
    for await (const run of client('globex').allRuns({ limit: 100 })) theirs.push(run.runId);
    expect(theirs.filter((id) => created.includes(id))).toEqual([]);
    const cancelled = await acme.listRuns({ status: 'cancelled', limit: 100 });
    expect(cancelled.runs.every((run) => run.status === 'cancelled')).toBe(true);
  });

  it('answers 400 naming the parameter for a bad limit, and for a cursor presented by another tenant', async () => {
    const page = await client('acme').listRuns({ limit: 1 });
    expect(page.nextCursor).toBeDefined();
    const foreign = await client('globex')
      .listRuns({ cursor: page.nextCursor! })
      .catch((error: unknown) => error);
    expect(foreign).toBeInstanceOf(TesseraApiError);
    expect((foreign as TesseraApiError).status).toBe(400);
    expect((foreign as TesseraApiError).issues.map((issue) => issue.path)).toEqual(['cursor']);
    const response = await raw('/runs?limit=0');
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { issues: { path: string }[] } }).error.issues.map((issue) => issue.path)).toEqual(['limit']);
  });
});

describe('GET /runs/{runId}: ETag, If-None-Match and Prefer: wait', () => {
  it('a long-poll on a new run answers with the changed run, not after its full wait', { timeout: 180_000 }, async () => {
    const acme = client('acme');
    const { runId } = await acme.createRun(example('scout'));
    const first = await acme.getRun(runId, {});
    if (!first.modified) throw new Error('a read without a tag is always a 200');
    expect(first.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    // The run is dispatched and its subtasks claimed within seconds: each is a change the wait sees.
    const read = await acme.getRun(runId, { ifNoneMatch: first.etag!, waitSeconds: 20 });
    expect(read.modified).toBe(true);
    if (read.modified) {
      expect(read.etag).not.toBe(first.etag);
      expect(read.run).not.toEqual(first.run);
    }
    await acme.cancelRun(runId).catch(() => undefined);
  });

  it('answers an unchanged run 304 with no body, also after a held wait', { timeout: 180_000 }, async () => {
    const acme = client('acme');
    // The tax run ends with every worker done (no late result can arrive): nothing changes after its answer.
    const { runId } = await acme.createRun(example('tax-2025'));
    const ended = await acme.waitForRun(runId, { timeoutMs: 150_000 });
    const first = await raw(`/runs/${runId}`);
    const etag = first.headers.get('etag')!;
    expect(((await first.json()) as { status: string }).status).toBe(ended.status);
    const notModified = await raw(`/runs/${runId}`, { 'if-none-match': etag });
    expect(notModified.status).toBe(304);
    expect(await notModified.text()).toBe('');
    expect(notModified.headers.get('etag')).toBe(etag);
    const held = await raw(`/runs/${runId}`, { 'if-none-match': etag, prefer: 'wait=1' });
    expect(held.status).toBe(304);
    expect(held.headers.get('preference-applied')).toBe('wait=1');
    expect(await held.text()).toBe('');
    expect((await raw(`/runs/${runId}`, { prefer: 'wait=21', 'if-none-match': etag })).status).toBe(400);
  });
});
