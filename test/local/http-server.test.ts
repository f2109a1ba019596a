import { Agent, request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonReply, listenOnLoopback } from '../../lib/local/http-server';

/** One GET through `agent`; says whether it went out on a socket kept from an earlier request. */
const get = (url: string, agent: Agent): Promise<{ status: number; reusedSocket: boolean }> =>
  new Promise((resolve, reject) => {
    const req = request(url, { agent }, (response) => {
      response.resume();
      response.once('end', () => resolve({ status: response.statusCode ?? 0, reusedSocket: req.reusedSocket }));
    });
    req.once('error', reject);
    req.end();
  });

describe('the local cloud’s HTTP servers', () => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  afterAll(() => agent.destroy());

  // Node's default closes an idle kept-alive socket after 5 s; a client sending on it just then
  // gets ECONNRESET or "socket hang up" with nothing answered. The servers keep idle sockets open
  // instead, so the second request, 6 s later, goes out on the first one's socket.
  it('keep an idle kept-alive connection open past Node’s 5-second default, so no request races its close', async () => {
    const server = await listenOnLoopback(async () => jsonReply(200, { ok: true }));
    try {
      expect(await get(server.url, agent)).toEqual({ status: 200, reusedSocket: false });
      await sleep(6_000);
      expect(await get(server.url, agent)).toEqual({ status: 200, reusedSocket: true });
    } finally {
      await server.close();
    }
  }, 15_000);
});
