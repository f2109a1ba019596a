import { describe, expect, it } from 'vitest';
import { TesseraApiError } from '../../lib/client';
import type { RunSummary } from '../../lib/contract';
import { client, example, target } from './target';

/**
 * GET /runs, ETags and the long-poll through the HTTP API. Twelve runs keep this file's added
 * wall time well under a minute on two cores: each is cancelled as soon as it is listed, so the
 * local cloud runs none of them to the end.
 */
const RUNS = 12;

const raw = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${target().apiUrl.replace(/\/$/, '')}${path}`, { headers: { authorization: `Bearer ${target().tokens.acme}`, ...headers } });

describe('GET /runs', () => {
  it('pages through the tenant’s runs newest first, with no duplicates, and another tenant sees none of them', { timeout: 120_000 }, async () => {
    const acme = client('acme');
    const created: string[] = [];
    // One after another, so their creation order is known.
    for (let index = 0; index < RUNS; index += 1) created.push((await acme.createRun({ ...example('scout'), goal: `list test ${index}` })).runId);
    await Promise.all(created.map((runId) => acme.cancelRun(runId).catch(() => undefined)));
    const listed: RunSummary[] = [];
    let pages = 0;
    for await (const run of acme.allRuns({ limit: 5 })) {
      listed.push(run);
      pages = Math.ceil(listed.length / 5);
    }
    const ids = listed.map((run) => run.runId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(pages).toBeGreaterThanOrEqual(Math.ceil(RUNS / 5));
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
    const foreign = await client('globex').listRuns({ cursor: page.nextCursor! }).catch((error: unknown) => error);
    expect(foreign).toBeInstanceOf(TesseraApiError);
    expect((foreign as TesseraApiError).status).toBe(400);
    expect((foreign as TesseraApiError).issues.map((issue) => issue.path)).toEqual(['cursor']);
    const response = await raw('/runs?limit=0');
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { issues: { path: string }[] } }).error.issues.map((issue) => issue.path)).toEqual(['limit']);
  });
});

describe('GET /runs/{runId}: ETag, If-None-Match and Prefer: wait', () => {
  it('answers an unchanged run 304 with no body, and a long-poll with the run as soon as it changes', { timeout: 60_000 }, async () => {
    const acme = client('acme');
    const { runId } = await acme.createRun(example('scout'));
    const first = await raw(`/runs/${runId}`);
    const etag = first.headers.get('etag');
    expect(first.status).toBe(200);
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    // The run may have moved on since; ask again until two reads agree, then check the 304.
    let current = etag!;
    let notModified: Response | undefined;
    for (let attempt = 0; attempt < 20 && notModified === undefined; attempt += 1) {
      const again = await raw(`/runs/${runId}`, { 'if-none-match': current });
      if (again.status === 304) notModified = again;
      else current = again.headers.get('etag')!;
    }
    expect(notModified?.status).toBe(304);
    expect(await notModified!.text()).toBe('');
    expect(notModified!.headers.get('etag')).toBe(current);
    // A long-poll held on the current tag; the run is cancelled while it waits.
    const events: string[] = [];
    const poll = acme.getRun(runId, { ifNoneMatch: current, waitSeconds: 20 }).then((read) => {
      events.push('poll answered');
      return read;
    });
    const cancelled = await acme.cancelRun(runId);
    events.push('cancel answered');
    const read = await poll;
    expect(cancelled.status).toBe('cancelled');
    expect(read.modified).toBe(true);
    if (!read.modified) return;
    expect(read.etag).not.toBe(current);
    expect(read.run.status === 'cancelled' || read.run.subtasks.some((s) => s.state !== 'pending')).toBe(true);
    expect(events).toContain('poll answered');
    const held = await raw(`/runs/${runId}`, { 'if-none-match': read.etag!, prefer: 'wait=1' });
    expect([200, 304]).toContain(held.status);
    expect(held.headers.get('preference-applied')).toBe('wait=1');
    expect((await raw(`/runs/${runId}`, { prefer: 'wait=21', 'if-none-match': '*' })).status).toBe(400);
  });
});
