import { describe, expect, it } from 'vitest';
import { TesseraApiError } from '../../lib/client';
import { client, example, target } from './target';

describe('authentication and tenant isolation', () => {
  it('answers 401 without credentials, as API Gateway does', async () => {
    const response = await fetch(`${target().apiUrl}/runs/anything`);
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ message: 'Unauthorized' });
  });

  it('answers a malformed percent-escape in the path 401 without a token and 404 with one, never 500', async () => {
    const { apiUrl, tokens } = target();
    const calls = [
      { method: 'GET', path: '/runs/%E0%A4%A' },
      { method: 'POST', path: '/runs/%ZZ/cancel' },
    ];
    for (const { method, path } of calls) {
      const anonymous = await fetch(`${apiUrl}${path}`, { method });
      expect(anonymous.status).toBe(401);
      const signed = await fetch(`${apiUrl}${path}`, { method, headers: { authorization: `Bearer ${tokens.acme}` } });
      expect(signed.status).toBe(404);
      expect(await signed.json()).toEqual({ error: expect.objectContaining({ code: 'RunNotFound' }) });
    }
  });

  it("answers 404 for another tenant's run, exactly as for one that does not exist", async () => {
    const { runId } = await client('acme').createRun(example('catering'));
    const asGlobex = await client('globex')
      .getRun(runId)
      .catch((e: unknown) => e);
    const missing = await client('globex')
      .getRun('no-such-run')
      .catch((e: unknown) => e);

    expect(asGlobex).toBeInstanceOf(TesseraApiError);
    expect((asGlobex as TesseraApiError).status).toBe(404);
    expect((asGlobex as TesseraApiError).body).toEqual({ error: expect.objectContaining({ code: 'RunNotFound', message: 'no such run' }) });
    expect((missing as TesseraApiError).status).toBe(404);
    expect((await client('acme').getRun(runId)).runId).toBe(runId);
  });

  it('makes POST /runs safe to retry with an Idempotency-Key, and refuses the key for another body', async () => {
    const tessera = client('acme');
    const key = `e2e-${Date.now()}`;
    const first = await tessera.createRun(example('catering'), { idempotencyKey: key });
    const again = await tessera.createRun(example('catering'), { idempotencyKey: key });
    const other = await tessera.createRun(example('tax-2025'), { idempotencyKey: key }).catch((e: unknown) => e);

    expect(again.runId).toBe(first.runId);
    expect((other as TesseraApiError).status).toBe(409);
  });
});
