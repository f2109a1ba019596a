import { describe, expect, it } from 'vitest';
import type { RunRequestInput } from '../../lib/contract';
import { uniqueName } from '../support/aws';
import { apiEvent, callApi, errorOf, halfYearRequest, itemsOfTenant, pipeline } from './support';

/**
 * Answers whose size and shape do not depend on what a caller sends: a 400 lists at most 100
 * problems and counts the rest; every route refuses a query parameter it does not take the same
 * way; question ids are unique and, once declared, the only ones a subtask may name.
 */
const p = pipeline('fn-api-bounds');

const post = (tenant: string, body: unknown) => callApi(p.get(), { routeKey: 'POST /runs', tenant, body: JSON.stringify(body) });

/** `count` news ids, each ending in a control character (U+0001), which the contract refuses in an id. */
const badIds = (count: number): string[] => Array.from({ length: count }, (_, i) => `news:acct-${String(i).padStart(10, '0')}\u0001`);

const newsRequest = (ids: readonly string[]): RunRequestInput => ({
  goal: 'What does the news say about each of our accounts?',
  universe: { dimension: 'ids', ids: [...ids] },
  split: { worker: 'scout-news', parts: 2, deadlineSeconds: 60, budget: { modelCalls: 1, estimatedCostPerCall: 1 } },
  budget: { modelCalls: 2, costLimit: 2 },
});

const CONTROL = 'must not contain control characters such as terminal escape sequences, line breaks or bidirectional overrides';

describe('a 400 with many problems', () => {
  it('lists the first 100 of 20,000 bad ids, counts the other 19,900, and stays under 64 KB', async () => {
    const tenant = uniqueName('tenant');
    const ids = badIds(20_000);
    const result = await p.get().api(apiEvent({ routeKey: 'POST /runs', tenant, body: JSON.stringify(newsRequest(ids)) }));
    const { statusCode, body } = result as { statusCode: number; body: string };

    expect(statusCode).toBe(400);
    expect(Buffer.byteLength(body)).toBeLessThan(64 * 1024);
    const error = errorOf({ statusCode, headers: {}, body: JSON.parse(body) });
    // One problem per id, each in universe.ids; none of them is planned.
    expect(error.code).toBe('InvalidRunRequest');
    expect(error.message).toBe('the run request has 20000 problems');
    expect(error.issues).toHaveLength(100);
    expect(error.issues?.[0]).toEqual({ code: 'invalid_request', path: 'universe.ids.0', message: `${CONTROL} (got ${JSON.stringify(ids[0])})` });
    expect(error.issues?.[99]?.path).toBe('universe.ids.99');
    expect(error.issuesOmitted).toBe(19_900);
    expect(await itemsOfTenant(p.get(), tenant)).toEqual([]);
  });

  it('lists every problem, without issuesOmitted, when there are at most 100', async () => {
    const answer = await post(uniqueName('tenant'), newsRequest(badIds(100)));
    const error = errorOf(answer);
    expect(error.issues).toHaveLength(100);
    expect(error).not.toHaveProperty('issuesOmitted');
  });

  it('quotes at most 80 characters of a long bad value', async () => {
    const goal = `${'x'.repeat(1500)}\u001b`;
    const error = errorOf(await post(uniqueName('tenant'), halfYearRequest({ goal })));
    expect(error.issues).toEqual([{ code: 'invalid_request', path: 'goal', message: `${CONTROL} (got "${'x'.repeat(80)}"…, 1,501 characters)` }]);
  });
});

describe('query parameters a route does not take', () => {
  const routes = [
    { routeKey: 'POST /runs', takes: 'it takes none' },
    { routeKey: 'GET /runs', takes: 'status, limit, cursor' },
    { routeKey: 'GET /runs/{runId}', takes: 'subtasks', runId: 'r-1' },
    { routeKey: 'GET /runs/{runId}/subtasks', takes: 'limit, cursor', runId: 'r-1' },
    { routeKey: 'POST /runs/{runId}/cancel', takes: 'it takes none', runId: 'r-1' },
  ];

  it('are refused the same way on every route: 400 InvalidQuery naming each one', async () => {
    for (const { routeKey, takes, runId } of routes) {
      const answer = await callApi(p.get(), {
        routeKey,
        tenant: uniqueName('tenant'),
        query: { x: '1' },
        ...(runId ? { runId } : {}),
        ...(routeKey === 'POST /runs' ? { body: '{}' } : {}),
      });
      expect(answer.statusCode, routeKey).toBe(400);
      expect(errorOf(answer), routeKey).toMatchObject({
        code: 'InvalidQuery',
        issues: [{ path: 'x', code: 'unknown_parameter', message: `is not a parameter of ${routeKey} (${takes})` }],
      });
    }
  });

  it('refuses __proto__ like any other name', async () => {
    const query = JSON.parse('{"__proto__": "1", "limit": "5"}') as Record<string, string>;
    const answer = await callApi(p.get(), { routeKey: 'GET /runs', tenant: uniqueName('tenant'), query });
    expect(answer.statusCode).toBe(400);
    expect(errorOf(answer).issues).toEqual([
      { path: '__proto__', code: 'unknown_parameter', message: 'is not a parameter of GET /runs (status, limit, cursor)' },
    ]);
  });

  it('still answers a known parameter with a bad value by naming it', async () => {
    const answer = await callApi(p.get(), { routeKey: 'GET /runs/{runId}', tenant: uniqueName('tenant'), runId: 'r-1', query: { subtasks: 'all' } });
    expect(answer.statusCode).toBe(400);
    expect(errorOf(answer).issues).toEqual([{ path: 'subtasks', code: 'invalid_value', message: 'must be one of page, none' }]);
  });
});

describe('question ids', () => {
  const [a, b] = halfYearRequest().subtasks ?? [];
  if (!a || !b) throw new Error('the half-year request has A and B');

  it('refuses a question declared twice, and a subtask naming one twice', async () => {
    const tenant = uniqueName('tenant');
    const answer = await post(
      tenant,
      halfYearRequest({ questions: [{ id: 'q1' }, { id: 'q2' }, { id: 'q1' }], subtasks: [{ ...a, questionIds: ['q1', 'q1'] }, b] }),
    );
    expect(answer.statusCode).toBe(400);
    expect(errorOf(answer).issues).toEqual([
      { code: 'duplicate_question', path: 'questions.2.id', message: 'question q1 is already declared at questions.0.id' },
      { code: 'duplicate_question', path: 'subtasks.0.questionIds.1', message: 'names question q1 twice (also at subtasks.0.questionIds.0)' },
    ]);
    expect(await itemsOfTenant(p.get(), tenant)).toEqual([]);
  });

  it('refuses a questionIds entry the declared questions do not include, naming the field', async () => {
    const answer = await post(
      uniqueName('tenant'),
      halfYearRequest({ questions: [{ id: 'q1' }, { id: 'q2' }], subtasks: [a, { ...b, questionIds: ['q2', 'Q2'] }] }),
    );
    expect(answer.statusCode).toBe(400);
    expect(errorOf(answer).issues).toEqual([
      { code: 'unknown_question', path: 'subtasks.1.questionIds.1', message: 'names question Q2, which questions does not declare (declared: q1 and q2)' },
    ]);
  });

  it('refuses questionIds when the request declares no questions at all, naming each entry and writing nothing', async () => {
    const tenant = uniqueName('tenant');
    const { questions: _declared, ...undeclared } = halfYearRequest();
    const answer = await post(tenant, undeclared);
    expect(answer.statusCode).toBe(400);
    expect(errorOf(answer).issues).toEqual([
      {
        code: 'unknown_question',
        path: 'subtasks.0.questionIds.0',
        message: 'names question q1, but the request declares no questions: declare it in questions',
      },
      {
        code: 'unknown_question',
        path: 'subtasks.1.questionIds.0',
        message: 'names question q2, but the request declares no questions: declare it in questions',
      },
    ]);
    expect(await itemsOfTenant(p.get(), tenant)).toEqual([]);
  });

  it('accepts the same request once it declares the questions its subtasks name', async () => {
    expect((await post(uniqueName('tenant'), halfYearRequest())).statusCode).toBe(202);
  });
});
