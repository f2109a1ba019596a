import { describe, expect, it } from 'vitest';
import type { RunResource } from '../../lib/contract';
import { MAX_WAIT_SECONDS } from '../../lib/contract';
import { DEFAULT_WAIT_SECONDS, watchRun, type WatchError } from '../../lib/web/live';
import { taxRun } from './fixtures';

/** A scripted API: answers the listed replies in order and records each request's headers. */
const scripted = (replies: Array<() => Response>) => {
  const requests: Array<{ url: string; headers: Record<string, string> }> = [];
  const fetch = (async (url: string, init: RequestInit) => {
    requests.push({ url, headers: { ...(init.headers as Record<string, string>) } });
    const reply = replies[requests.length - 1];
    if (!reply) throw new Error('no more replies');
    return reply();
  }) as unknown as typeof globalThis.fetch;
  return { fetch, requests };
};

const running = (): RunResource => ({ ...taxRun(), status: 'running', answer: null, updatedAt: '2026-11-30T12:00:01.000Z' });
const json = (run: RunResource, etag?: string) => () => new Response(JSON.stringify(run), { status: 200, headers: etag ? { etag } : {} });

describe('watchRun', () => {
  it('sends If-None-Match and Prefer once it has an ETag, skips 304s, and stops when the run has ended', async () => {
    const api = scripted([json(running(), '"v1"'), () => new Response(null, { status: 304 }), json(taxRun(), '"v2"')]);
    const seen: string[] = [];
    const watch = watchRun({
      apiUrl: 'https://api.example/',
      runId: 'run tax',
      tokenSource: async () => 'T',
      onRun: (run) => seen.push(run.status),
      fetch: api.fetch,
      intervalMs: 0,
    });
    await watch.done;
    expect(seen).toEqual(['running', 'succeeded']);
    expect(api.requests.map((r) => r.url)).toEqual(Array(3).fill('https://api.example/runs/run%20tax'));
    expect(api.requests[0]?.headers).toEqual({ authorization: 'Bearer T' });
    expect(api.requests[1]?.headers).toEqual({ authorization: 'Bearer T', 'if-none-match': '"v1"', prefer: 'wait=20' });
    expect(api.requests[2]?.headers['if-none-match']).toBe('"v1"');
  });

  it('polls an API without ETags with the token alone and reports a run only when its body changed', async () => {
    const api = scripted([json(running()), json(running()), json(taxRun())]);
    const seen: string[] = [];
    await watchRun({
      apiUrl: 'https://api.example',
      runId: 'r',
      tokenSource: () => 'T',
      onRun: (run) => seen.push(run.status),
      fetch: api.fetch,
      intervalMs: 0,
    }).done;
    expect(seen).toEqual(['running', 'succeeded']);
    expect(api.requests.every((r) => Object.keys(r.headers).join() === 'authorization')).toBe(true);
  });

  it('asks for the longest wait the API honours (the component cannot import the contract at run time)', () => {
    expect(DEFAULT_WAIT_SECONDS).toBe(MAX_WAIT_SECONDS);
  });

  it('stops at a 404 with a final error', async () => {
    const api = scripted([() => new Response('{}', { status: 404 })]);
    const errors: WatchError[] = [];
    await watchRun({
      apiUrl: 'https://api.example',
      runId: 'r',
      tokenSource: () => 'T',
      onRun: () => undefined,
      onError: (e) => errors.push(e),
      fetch: api.fetch,
      intervalMs: 0,
    }).done;
    expect(errors).toEqual([{ status: 404, message: 'GET /runs/r answered 404', final: true }]);
  });
});
