import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { RunRequestInput, RunResource } from '../../lib/contract';
import { client, target } from './target';

/** 100,000 account ids, `acct-000000` … `acct-099999` (11 characters each). */
const ids = Array.from({ length: 100_000 }, (_, i) => `acct-${String(i).padStart(6, '0')}`);
/** Accounts the source has no record for: four in the first half, three in the second. */
const absent = ['acct-000007', 'acct-012345', 'acct-049999', 'acct-000123', 'acct-050000', 'acct-077777', 'acct-099999'];

const request: RunRequestInput = {
  goal: 'Which of our 100,000 accounts can the ledger source read?',
  universe: { dimension: 'ids', ids, noun: 'account' },
  split: {
    worker: 'chaos',
    parts: 2,
    input: { absent, report: 'count' },
    deadlineSeconds: 120,
    budget: { modelCalls: 1, estimatedCostPerCall: 0 },
  },
  policy: { retry: { timed_out: 0, invalid: 0, empty: 0 }, onOptionalGap: 'degrade', maxRounds: 1 },
  budget: { modelCalls: 2, costLimit: 1 },
};

/** Lambda's limit on a synchronous response. */
const LAMBDA_RESPONSE_LIMIT = 6 * 1024 * 1024;

describe('a universe of 100,000 ids split into two parts', () => {
  it('is accepted, runs end to end, and its coverage names exactly the missing ids', async () => {
    const body = JSON.stringify(request);
    // Well over the ~240 KB at which the run description used to exceed DynamoDB's item limit.
    expect(body.length).toBeGreaterThan(1_400_000);
    const tessera = client();
    const { runId } = await tessera.createRun(request);
    const run = await tessera.waitForRun(runId, { intervalMs: 1_000, timeoutMs: 170_000 });

    expect(run.status).toBe('succeeded');
    expect(run.universe).toEqual(request.universe);
    expect(run.subtasks.map((s) => [s.id, s.state, s.assigned])).toEqual([
      ['A', 'ok', { ids: ids.slice(0, 50_000) }],
      ['B', 'ok', { ids: ids.slice(50_000) }],
    ]);
    expect(run.subtasks.map((s) => (s.observed !== null && 'ids' in s.observed ? s.observed.recordCount : -1))).toEqual([49_996, 49_997]);
    expect(run.answer?.result).toEqual({ touched: [], records: 99_993 });
    const coverage = run.answer!.coverage;
    expect(coverage.complete).toBe(false);
    expect(coverage.gaps.map((g) => [g.kind, g.subtaskId, g.ids])).toEqual([
      ['observed', 'A', ['acct-000007', 'acct-000123', 'acct-012345', 'acct-049999']],
      ['observed', 'B', ['acct-050000', 'acct-077777', 'acct-099999']],
    ]);
    expect(coverage.statement).toContain('acct-000007');
  }, 180_000);
});

describe('GET /runs/{runId} of a 100,000-id run', () => {
  it('fits Lambda’s 6 MB response compressed, and the compressed body is the run resource', async () => {
    const tessera = client();
    const { runId } = await tessera.createRun({ ...request, goal: 'The same 100,000 accounts, read raw' });
    const run: RunResource = await tessera.waitForRun(runId, { intervalMs: 1_000, timeoutMs: 170_000 });
    const response = await fetch(`${target().apiUrl}/runs/${runId}`, {
      headers: { authorization: `Bearer ${target().tokens.acme}`, 'accept-encoding': 'gzip' },
      // Undici would decompress it; ask for the bytes as sent.
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-encoding')).toBe('gzip');
    const wire = Buffer.from(await response.arrayBuffer());
    // Node's fetch decompresses a gzip body itself; accept either form, but the resource must be whole.
    const text = wire[0] === 0x1f && wire[1] === 0x8b ? gunzipSync(wire).toString('utf8') : wire.toString('utf8');
    const resource = JSON.parse(text) as RunResource;
    expect(resource.subtasks.map((s) => s.state)).toEqual(run.subtasks.map((s) => s.state));
    expect(Buffer.byteLength(text)).toBeGreaterThan(4_000_000);
    // What came back from the function: compressed and base64-encoded, under Lambda's limit.
    expect(Math.ceil((Number(response.headers.get('content-length') ?? wire.length) * 4) / 3)).toBeLessThan(LAMBDA_RESPONSE_LIMIT);
  }, 180_000);
});
