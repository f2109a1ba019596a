import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createTesseraClient } from '../../lib/client';
import { RUN_EXIT, submitAndReport } from '../../lib/cli/run';
import type { CliIo } from '../../lib/cli/router';

/**
 * `tessera run` after its run was accepted: whatever ends the wait (the local cloud killed, or
 * restarted and no longer knowing the run), the person sees the run id and what to do.
 */

const RUN_ID = '3d4923a3-eaa0-4db6-a632-903316be535d';

const terminal = () => {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (text) => void out.push(text), err: (text) => void err.push(text), readText: async () => '' };
  return { io, out, err };
};

/** A real API on 127.0.0.1 that accepts one run and answers every GET with `getStatus`. */
const fakeApi = async (getStatus: number): Promise<{ server: Server; url: string }> => {
  const server = createServer((request, response) => {
    if (request.method === 'POST') {
      response.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ runId: RUN_ID, status: 'running', location: `/runs/${RUN_ID}` }));
      // The cloud dies right after accepting: no later request reaches it.
      if (getStatus === 0) server.close();
      return;
    }
    response.writeHead(getStatus, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'RunNotFound', message: 'no such run' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
};

describe('tessera run, when waiting for an accepted run fails', () => {
  let server: Server | undefined;
  afterEach(() => new Promise((resolve) => (server?.listening ? server.close(resolve) : resolve(undefined))));

  it('prints the run id, that the API could not be reached, and what to do when the cloud is gone', async () => {
    const api = await fakeApi(0);
    server = api.server;
    const t = terminal();
    const code = await submitAndReport(t.io, createTesseraClient({ apiUrl: api.url, token: 't' }), {}, { json: false, apiUrl: api.url, local: true });

    expect(code).toBe(RUN_EXIT.requestError);
    expect(t.out).toEqual([]);
    expect(t.err[0]).toBe(`run ${RUN_ID} accepted`);
    const message = t.err.slice(1).join('\n').split('\n');
    expect(message[0]).toMatch(new RegExp(`^tessera: stopped waiting for run ${RUN_ID}: the API could not be reached \\(.*ECONNREFUSED.*\\)\\.$`));
    expect(message[1]).toBe(`  The run was accepted; it may still be running. To follow it: tessera runs watch ${RUN_ID}`);
    expect(message[2]).toBe(`  (as it is now: tessera runs show ${RUN_ID}).`);
    expect(message[3]).toContain('The local cloud keeps runs in memory: if it was stopped or restarted, this run is gone');
  });

  it('says the API no longer knows the run (a restarted local cloud answers 404), with the run id', async () => {
    const api = await fakeApi(404);
    server = api.server;
    const t = terminal();
    const code = await submitAndReport(t.io, createTesseraClient({ apiUrl: api.url, token: 't' }), {}, { json: false, apiUrl: `${api.url}/`, local: false });

    expect(code).toBe(RUN_EXIT.requestError);
    expect(t.err.slice(1).join('\n').split('\n')).toEqual([
      `tessera: stopped waiting for run ${RUN_ID}: the API no longer knows this run (404).`,
      `  The run was accepted; it may still be running. To follow it: tessera runs watch ${RUN_ID} --api ${api.url}`,
      `  (as it is now: tessera runs show ${RUN_ID} --api ${api.url}).`,
    ]);
  });

  it('names the run when the API refuses the token mid-wait (a restarted local cloud signs with a new key)', async () => {
    const api = await fakeApi(401);
    server = api.server;
    const t = terminal();
    const code = await submitAndReport(t.io, createTesseraClient({ apiUrl: api.url, token: 't' }), {}, { json: false, apiUrl: api.url, local: true });

    expect(code).toBe(RUN_EXIT.requestError);
    expect(t.err[1]?.split('\n')[0]).toBe(`tessera: stopped waiting for run ${RUN_ID}: the API refused the token (401).`);
  });
});
