import { describe, expect, it } from 'vitest';
import type { RunRequestInput } from '../../lib/contract';
import { uniqueName } from '../support/aws';
import { answerOf, apiEvent, errorOf, itemsOfTenant, pipeline } from './support';

/**
 * The largest run request: the API refuses one over the ledger's maximum (2 MiB of JSON) with 413
 * naming the field, before anything is written or started.
 */
const p = pipeline('fn-api-size');

/** `count` ids of the news source, 20 characters each (`news:acct-` and 10 digits). */
const newsIds = (count: number): string[] => Array.from({ length: count }, (_, i) => `news:acct-${String(i).padStart(10, '0')}`);

const request = (ids: readonly string[], parts = 2): RunRequestInput => ({
  goal: 'What does the news say about each of our accounts?',
  universe: { dimension: 'ids', ids: [...ids] },
  split: { worker: 'scout-news', parts, deadlineSeconds: 60, budget: { modelCalls: 1, estimatedCostPerCall: 1 } },
  budget: { modelCalls: parts, costLimit: parts },
});

describe('POST /runs with a very large universe', () => {
  it('answers 413 RequestTooLarge naming universe.ids, and writes and starts nothing', async () => {
    const tenant = uniqueName('tenant');
    // 100,000 ids of 20 characters: 2,300,001 bytes of JSON for universe.ids, over 2 MiB (2,097,152).
    const answer = answerOf(
      await p.get().api(apiEvent({ routeKey: 'POST /runs', tenant, body: JSON.stringify(request(newsIds(100_000))), idempotencyKey: 'big-1' })),
    );

    expect(answer.statusCode).toBe(413);
    const error = errorOf(answer);
    expect(error.code).toBe('RequestTooLarge');
    expect(error.issues).toEqual([
      { path: 'universe.ids', code: 'too_large', message: 'universe.ids is 2300001 bytes as JSON; the whole request may be at most 2097152' },
    ]);
    expect(await itemsOfTenant(p.get(), tenant)).toEqual([]);
    expect(p.get().calls.start.filter((call) => call.tenantId === tenant)).toEqual([]);
  });

  it('accepts 90,000 of the same ids (2,070,001 bytes), under the maximum', async () => {
    const tenant = uniqueName('tenant');
    const answer = answerOf(await p.get().api(apiEvent({ routeKey: 'POST /runs', tenant, body: JSON.stringify(request(newsIds(90_000))) })));
    expect(answer.statusCode).toBe(202);
  });
});

describe('POST /runs with a large plan', () => {
  it('stores a run of 501 planned subtasks with ⌈501 / 500⌉ = 2 write shards, and one of 500 with the one-partition layout', async () => {
    const ids = newsIds(501);
    const shardsOf = async (parts: number): Promise<number | undefined> => {
      const tenant = uniqueName('tenant');
      const answer = answerOf(await p.get().api(apiEvent({ routeKey: 'POST /runs', tenant, body: JSON.stringify(request(ids, parts)) })));
      expect(answer.statusCode).toBe(202);
      const { runId } = answer.body as { runId: string };
      return (await p.get().ledger.getRun(tenant, runId))?.run.shards;
    };
    expect(await shardsOf(501)).toBe(2);
    expect(await shardsOf(500)).toBeUndefined();
  });
});
