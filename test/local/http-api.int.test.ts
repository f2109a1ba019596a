import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { LocalCloud } from '../../lib/local/cloud';
import { createJwtAuthority } from '../../lib/local/jwt-authority';
import { startTestCloud } from './support';

describe('local HTTP API', () => {
  let cloud: LocalCloud;
  let alice: string;
  const get = (path: string, token?: string, headers: Record<string, string> = {}) =>
    fetch(`${cloud.apiUrl}${path}`, { headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) } });

  /** A GET whose path goes on the wire exactly as written (fetch would resolve `..` and `%2e%2e` first). */
  const rawGet = (path: string, token?: string): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const url = new URL(cloud.apiUrl ?? '');
      const request = httpRequest(
        { host: url.hostname, port: url.port, path, method: 'GET', headers: token ? { authorization: `Bearer ${token}` } : {} },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        },
      );
      request.on('error', reject);
      request.end();
    });

  beforeAll(async () => {
    // A stand-in for the local viewer, the page served at `/` before the routes.
    cloud = await startTestCloud({
      pages: async (method, pathname) => (method === 'GET' && pathname === '/' ? { status: 200, body: 'the viewer' } : undefined),
    });
    alice = await cloud.mintToken({ tenant: 'acme', subject: 'alice' });
  });
  afterAll(() => cloud?.stop());

  it('answers 401 Unauthorized without a token, exactly like API Gateway', async () => {
    const response = await get('/runs/r-1');
    expect(response.status).toBe(401);
    expect(await response.text()).toBe('{"message":"Unauthorized"}');
  });

  it('answers 401 to a token signed by another key, and to an expired one', async () => {
    const impostor = await createJwtAuthority({ issuer: cloud.authority.issuer, audience: cloud.authority.audience });
    const forged = await impostor.mintToken({ tenant: 'acme', subject: 'mallory' });
    const expired = await cloud.mintToken({ tenant: 'acme', subject: 'alice', expiresIn: -60 });
    for (const token of [forged, expired]) {
      const response = await get('/runs/r-1', token);
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({ message: 'Unauthorized' });
    }
  });

  it('passes the claims, the route and the path parameters of a valid token to the handler', async () => {
    const response = await get('/runs/r-1?verbose=1&verbose=2', alice);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-api')).toBe('harness-test');
    const seen = await response.json();
    expect(seen).toMatchObject({
      routeKey: 'GET /runs/{runId}',
      rawPath: '/runs/r-1',
      rawQueryString: 'verbose=1&verbose=2',
      pathParameters: { runId: 'r-1' },
      queryStringParameters: { verbose: '1,2' },
      claims: { 'custom:tenant': 'acme', sub: 'alice', iss: cloud.authority.issuer, aud: 'tessera-local', exp: expect.stringMatching(/^\d+$/) },
      scopes: null,
      stage: '$default',
      method: 'GET',
    });
  });

  it('routes a path as sent: /runs/%2e%2e is GET /runs/{runId} with the id "..", never the page at /', async () => {
    expect(await (await get('/')).text()).toBe('the viewer');
    // fetch resolves dot segments (and %2e%2e) itself; a raw request sends the path as written.
    for (const path of ['/runs/%2e%2e', '/runs/%2E%2e', '/runs/..', '/runs/.']) {
      const response = await rawGet(path, alice);
      expect(response.status, path).toBe(200);
      expect(JSON.parse(response.body), path).toMatchObject({
        routeKey: 'GET /runs/{runId}',
        rawPath: path,
        pathParameters: { runId: decodeURIComponent(path.slice(6)) },
      });
    }
    // Without a token the route still answers as API Gateway does: 401, not the page.
    expect((await rawGet('/runs/%2e%2e')).status).toBe(401);
    expect((await rawGet('/runs/r-1/%2e%2e', alice)).status).toBe(404);
  });

  it('passes every query parameter, __proto__ and constructor included, for the function to judge', async () => {
    const response = await get('/runs/r-1?__proto__=1&constructor=2&__proto__=3', alice);
    // JSON.parse keeps `__proto__` as an own property (a schema's parse would drop it).
    const seen = (await response.json()) as { queryStringParameters: Record<string, string>; rawQueryString: string };
    expect(Object.entries(seen.queryStringParameters)).toEqual([
      ['__proto__', '1,3'],
      ['constructor', '2'],
    ]);
    expect(seen.rawQueryString).toBe('__proto__=1&constructor=2&__proto__=3');
  });

  it("answers 500 when the function's response is over Lambda's 6 MB limit, as API Gateway does", async () => {
    const response = await get('/runs/huge', alice);
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ message: 'Internal Server Error' });
  });

  it('answers 401, not 500, to a path with a malformed percent-escape and no token', async () => {
    for (const path of ['/runs/%E0%A4%A', '/runs/%ZZ', '/runs/%ED%A0%80']) {
      const response = await get(path);
      expect(response.status).toBe(401);
      expect(await response.text()).toBe('{"message":"Unauthorized"}');
    }
  });

  it('passes a path segment that is not valid percent-encoding to the function as it came', async () => {
    const response = await get('/runs/%E0%A4%A', alice);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ routeKey: 'GET /runs/{runId}', pathParameters: { runId: '%E0%A4%A' } });
  });

  it('delivers every claim as API Gateway does: scalars as text, arrays as [a b], objects as JSON, null left out', async () => {
    const token = await cloud.mintToken({
      tenant: 'acme',
      subject: 'alice',
      claims: { level: 123, admin: true, groups: ['ops', 'dev', 7], address: { city: 'Oslo' }, nickname: null },
    });
    const response = await get('/runs/r-1', token);
    const { claims } = z.object({ claims: z.record(z.string(), z.unknown()) }).parse(await response.json());
    expect(claims).toMatchObject({ level: '123', admin: 'true', groups: '[ops dev 7]', address: '{"city":"Oslo"}', 'custom:tenant': 'acme' });
    expect(claims).not.toHaveProperty('nickname');
    expect(Object.values(claims).every((value) => typeof value === 'string')).toBe(true);
  });

  it("answers a body over 10 MB with 413 and API Gateway's message instead of closing the connection", async () => {
    const response = await fetch(`${cloud.apiUrl}/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
      body: 'x'.repeat(10 * 1024 * 1024 + 1),
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ message: 'Request Entity Too Large' });
  });

  it('turns a plain object result into a 200 JSON response', async () => {
    const response = await fetch(`${cloud.apiUrl}/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
      body: '{"goal":"41 guests"}',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual({ accepted: true, api: 'harness-test', body: '{"goal":"41 guests"}' });
  });

  it('answers 404 Not Found for an unknown route or method', async () => {
    for (const response of [
      await get('/nope', alice),
      await fetch(`${cloud.apiUrl}/runs/r-1`, { method: 'DELETE', headers: { authorization: `Bearer ${alice}` } }),
    ]) {
      expect(response.status).toBe(404);
      expect(await response.text()).toBe('{"message":"Not Found"}');
    }
  });

  it('answers 403 Forbidden when the token lacks the route scope', async () => {
    expect((await get('/admin', alice)).status).toBe(403);
    const admin = await cloud.mintToken({ tenant: 'acme', subject: 'root', scopes: ['tessera/admin'] });
    const response = await get('/admin', admin);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ scopes: ['tessera/admin'] });
  });

  it('answers 500 Internal Server Error when the handler throws', async () => {
    const response = await get('/runs/explode', alice);
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ message: 'Internal Server Error' });
  });

  it('serves a public route without a token', async () => {
    expect((await get('/health')).status).toBe(200);
  });

  it('answers CORS preflight from the API configuration', async () => {
    const preflight = (origin: string) => fetch(`${cloud.apiUrl}/runs`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
    const allowed = await preflight('https://app.example.com');
    expect(allowed.status).toBe(204);
    expect(Object.fromEntries([...allowed.headers].filter(([name]) => name.startsWith('access-control-')))).toEqual({
      'access-control-allow-origin': 'https://app.example.com',
      'access-control-allow-methods': 'GET,POST',
      'access-control-allow-headers': 'authorization,content-type',
      'access-control-max-age': '600',
    });
    expect((await preflight('https://evil.example.com')).headers.get('access-control-allow-origin')).toBeNull();
    expect((await get('/health', undefined, { origin: 'https://app.example.com' })).headers.get('access-control-allow-origin')).toBe('https://app.example.com');
  });

  it('publishes the public key that verifies its tokens', async () => {
    const jwks = z.object({ keys: z.array(z.record(z.string(), z.unknown())) }).parse(await (await fetch(`${cloud.apiUrl}/.well-known/jwks.json`)).json());
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
    // A JWKS carries public keys only: no private exponent.
    expect(jwks.keys[0]).not.toHaveProperty('d');
  });
});
