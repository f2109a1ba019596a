import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createTesseraClient, TesseraApiError } from '../../lib/client';

/**
 * The client retries a read the API answered 429, 502, 503 or 504 (a throttled request, or a
 * gateway or function that timed out under load), after the configured pauses, and never a write.
 */

/** A real API on 127.0.0.1 answering the n-th request (from 1) with `statusOf(n)`; it counts requests. */
const api = async (statusOf: (n: number) => number) => {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    const status = statusOf(requests.length);
    const body = status === 200 ? { runs: [] } : status === 202 ? { runId: 'r', status: 'running', location: '/runs/r' } : { message: 'Service Unavailable' };
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, requests, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
};

describe('the API client under transient failures', () => {
  let server: Server | undefined;
  afterEach(() => new Promise((resolve) => (server?.listening ? server.close(resolve) : resolve(undefined))));

  it('retries a GET answered 502 then 504, and returns the third answer', async () => {
    const fake = await api((n) => [502, 504][n - 1] ?? 200);
    server = fake.server;
    const client = createTesseraClient({ apiUrl: fake.url, token: 't', readRetryDelaysMs: [10, 10, 10] });
    expect(await client.listRuns()).toEqual({ runs: [] });
    expect(fake.requests).toEqual(['GET /runs', 'GET /runs', 'GET /runs']);
  });

  it('gives up after its pauses run out: one try and three retries, then the last answer as the error', async () => {
    const fake = await api(() => 503);
    server = fake.server;
    const client = createTesseraClient({ apiUrl: fake.url, token: 't', readRetryDelaysMs: [10, 10, 10] });
    const error = await client.listRuns().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TesseraApiError);
    expect((error as TesseraApiError).status).toBe(503);
    expect(fake.requests).toHaveLength(4);
  });

  it('does not retry a status that would answer the same again (404), nor any write (POST answered 503)', async () => {
    const notFound = await api(() => 404);
    server = notFound.server;
    const client = createTesseraClient({ apiUrl: notFound.url, token: 't', readRetryDelaysMs: [10, 10, 10] });
    await expect(client.listRuns()).rejects.toMatchObject({ status: 404 });
    expect(notFound.requests).toHaveLength(1);
    await new Promise((resolve) => notFound.server.close(resolve));

    const busy = await api(() => 503);
    server = busy.server;
    const writer = createTesseraClient({ apiUrl: busy.url, token: 't', readRetryDelaysMs: [10, 10, 10] });
    // The body as text: the client sends it as it is.
    await expect(writer.createRun('{"goal":"one id"}')).rejects.toMatchObject({ status: 503 });
    expect(busy.requests).toEqual(['POST /runs']);
  });

  it('retries nothing with no pauses configured', async () => {
    const fake = await api((n) => (n === 1 ? 502 : 200));
    server = fake.server;
    const client = createTesseraClient({ apiUrl: fake.url, token: 't', readRetryDelaysMs: [] });
    await expect(client.listRuns()).rejects.toMatchObject({ status: 502 });
    expect(fake.requests).toHaveLength(1);
  });
});
