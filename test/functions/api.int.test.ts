import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createHandler } from '../../functions/api';
import { RunAccepted, RunResource } from '../../lib/contract';
import { createLedger } from '../../lib/ledger';
import { createLogger } from '../../lib/runtime/lambda';
import { referenceRegistry } from '../../examples/app';
import { documentClient, uniqueName } from '../support/aws';
import { acceptRun, answerOf, apiEvent, callApi, dispatchRound, errorOf, halfYearRequest, itemsOfTenant, pipeline, recordingExecutions, T0 } from './support';

/**
 * The HTTP API handler over the real ledger and the real planner: what each route answers, and
 * what it writes (or, for a rejected request, that it writes nothing and starts nothing).
 */
const p = pipeline('fn-api');

const post = (tenant: string | null, body: unknown, idempotencyKey?: string) =>
  callApi(p.get(), {
    routeKey: 'POST /runs',
    tenant,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...(idempotencyKey ? { idempotencyKey } : {}),
  });

describe('POST /runs', () => {
  it('accepts a tiling request with 202, its location, and starts the execution named after the run', async () => {
    const tenant = uniqueName('tenant');
    const answer = await post(tenant, halfYearRequest());

    expect(answer.statusCode).toBe(202);
    const accepted = RunAccepted.parse(answer.body);
    expect(p.get().issuedRunIds).toContain(accepted.runId);
    expect(accepted).toEqual({ runId: accepted.runId, status: 'running', location: `/runs/${accepted.runId}`, warnings: [] });
    expect(answer.body).toHaveProperty('warnings', []);
    expect(answer.headers.location).toBe(`/runs/${accepted.runId}`);
    expect(p.get().calls.start.filter((call) => call.tenantId === tenant)).toEqual([{ runId: accepted.runId, tenantId: tenant }]);
    const stored = await p.get().ledger.getRun(tenant, accepted.runId);
    expect(stored?.run).toMatchObject({ status: 'running', createdAt: T0, callsLimit: 40, costLimit: 500, round: 0 });
  });

  it('rejects the tax example\'s "March through June" with 400 naming subtasks.1.scope.from, A and B, and writes nothing', async () => {
    const tenant = uniqueName('tenant');
    const answer = await post(tenant, halfYearRequest({}, '2025-03-01'), 'typo-key');

    expect(answer.statusCode).toBe(400);
    const error = errorOf(answer);
    expect(error.code).toBe('InvalidRunRequest');
    const overlap = { code: 'assignment_overlap', path: 'subtasks.1.scope.from', subtaskIds: ['A', 'B'], from: '2025-03-01', toExclusive: '2025-04-01' };
    expect(error.issues).toEqual([{ ...overlap, message: 'subtasks A and B both cover 2025-03-01..2025-04-01' }]);
    // Not a run, not an idempotency record, not an execution.
    expect(await itemsOfTenant(p.get(), tenant)).toEqual([]);
    expect(p.get().calls.start.filter((call) => call.tenantId === tenant)).toEqual([]);
  });

  it('answers a body that is not JSON with 400 InvalidJson', async () => {
    const answer = await post(uniqueName('tenant'), '{"goal": "unterminated');
    expect(answer.statusCode).toBe(400);
    expect(errorOf(answer)).toMatchObject({ code: 'InvalidJson', message: 'the request body is not valid JSON' });
  });

  it('names the path of an unknown worker kind', async () => {
    const request = halfYearRequest();
    const [a, b] = request.subtasks ?? [];
    const answer = await post(uniqueName('tenant'), { ...request, subtasks: [{ ...a, worker: 'tax-forms' }, b] });

    expect(answer.statusCode).toBe(400);
    expect(errorOf(answer).issues).toEqual([expect.objectContaining({ code: 'unknown_worker', path: 'subtasks.0.worker' })]);
    expect(errorOf(answer).issues?.[0]?.message).toMatch(/^unknown worker kind tax-forms \(known: .*tax-statements/);
  });

  it('names subtasks.0.justification for a required subtask without one', async () => {
    const request = halfYearRequest();
    const [a, b] = request.subtasks ?? [];
    const answer = await post(uniqueName('tenant'), { ...request, subtasks: [{ ...a, justification: undefined }, b] });

    expect(answer.statusCode).toBe(400);
    expect(errorOf(answer).issues).toEqual([expect.objectContaining({ code: 'invalid_request', path: 'subtasks.0.justification' })]);
  });

  it('names a budget that is not positive and a deadline beyond the horizon', async () => {
    const request = halfYearRequest();
    const [a, b] = request.subtasks ?? [];
    const noBudget = await post(uniqueName('tenant'), { ...request, budget: { modelCalls: 0, costLimit: 500 } });
    const tooLong = await post(uniqueName('tenant'), { ...request, subtasks: [a, { ...b, deadlineSeconds: 901 }] });

    expect(noBudget.statusCode).toBe(400);
    expect(errorOf(noBudget).issues).toEqual([expect.objectContaining({ code: 'invalid_request', path: 'budget.modelCalls' })]);
    expect(tooLong.statusCode).toBe(400);
    expect(errorOf(tooLong).issues).toEqual([
      { code: 'deadline_out_of_horizon', path: 'subtasks.1.deadlineSeconds', message: 'must be between 1 and 900 seconds (got 901)' },
    ]);
  });

  it('returns the same run for the same Idempotency-Key and body, and 409 for another body', async () => {
    const tenant = uniqueName('tenant');
    const first = RunAccepted.parse((await post(tenant, halfYearRequest(), 'order-7')).body);
    // The retry spells out the policy defaults the first body left implicit: still the same request.
    const spelledOut = halfYearRequest({
      policy: { maxRounds: 2, onRequiredGap: 'fail', onOptionalGap: 'degrade', retry: { timed_out: 1, invalid: 1, empty: 0 } },
    });
    const retry = await post(tenant, spelledOut, 'order-7');

    expect(retry.statusCode).toBe(202);
    expect(RunAccepted.parse(retry.body).runId).toBe(first.runId);
    // The retry starts the same execution name again, which Step Functions treats as the same execution.
    expect(p.get().calls.start.filter((call) => call.tenantId === tenant)).toEqual([
      { runId: first.runId, tenantId: tenant },
      { runId: first.runId, tenantId: tenant },
    ]);
    const runs = (await itemsOfTenant(p.get(), tenant)).filter((item) => item.sk === 'RUN');
    expect(runs.map((item) => item.runId)).toEqual([first.runId]);

    const changed = await post(tenant, halfYearRequest({ goal: 'Total deductible expenses for 2024' }), 'order-7');
    expect(changed.statusCode).toBe(409);
    expect(errorOf(changed).code).toBe('IdempotencyConflict');
  });

  it('refuses an Idempotency-Key with a space in it', async () => {
    const answer = await post(uniqueName('tenant'), halfYearRequest(), 'order 7');
    expect(answer.statusCode).toBe(400);
    expect(errorOf(answer).code).toBe('InvalidIdempotencyKey');
  });
});

describe('GET /runs/{runId}', () => {
  it("shows a tenant its own run as the contract's run resource and another tenant 404", async () => {
    const tenant = uniqueName('tenant');
    const runId = await acceptRun(p.get(), tenant, halfYearRequest());

    const own = await callApi(p.get(), { routeKey: 'GET /runs/{runId}', tenant, runId });
    expect(own.statusCode).toBe(200);
    expect(RunResource.parse(own.body)).toEqual({
      runId,
      status: 'running',
      goal: 'Total deductible household expenses for the first half of 2025',
      createdAt: T0,
      updatedAt: T0,
      universe: { dimension: 'time', from: '2025-01-01', toExclusive: '2025-07-01' },
      round: 0,
      progress: { dispatched: 0, terminal: 0, byState: { pending: 0, running: 0, ok: 0, timed_out: 0, invalid: 0, empty: 0, cancelled: 0 } },
      budget: { modelCalls: 40, costLimit: 500 },
      usage: { modelCalls: 0, estimatedCost: 0 },
      subtasks: [],
      answer: null,
    });

    const other = await callApi(p.get(), { routeKey: 'GET /runs/{runId}', tenant: uniqueName('tenant'), runId });
    expect(other.statusCode).toBe(404);
    expect(errorOf(other)).toMatchObject({ code: 'RunNotFound', message: 'no such run' });
  });
});

describe('POST /runs/{runId}/cancel', () => {
  it('cancels a dispatched run and answers 200 with its resource, stopping its execution and answering no task token', async () => {
    const tenant = uniqueName('tenant');
    const runId = await acceptRun(p.get(), tenant, halfYearRequest());
    const { items } = await dispatchRound(p.get(), tenant, runId);
    for (const item of items) await p.get().deadline({ action: 'await', ...item, taskToken: `token-${runId}-${item.subtaskId}` });

    const answer = await callApi(p.get(), { routeKey: 'POST /runs/{runId}/cancel', tenant, runId });

    expect(answer.statusCode).toBe(200);
    const resource = RunResource.parse(answer.body);
    expect(resource.status).toBe('cancelled');
    expect(resource.subtasks.map((s) => [s.id, s.state])).toEqual([
      ['A', 'cancelled'],
      ['B', 'cancelled'],
    ]);
    // One StopExecution ends every waiting iteration; the closing that follows sweeps the subtasks.
    expect(p.get().calls.stop.filter((stopped) => stopped === runId)).toEqual([runId]);
    expect(p.get().calls.release.filter((call) => call.taskToken.startsWith(`token-${runId}-`))).toEqual([]);

    // A repeated cancel stops the execution again (finishing a cancel cut short between its calls)…
    expect((await callApi(p.get(), { routeKey: 'POST /runs/{runId}/cancel', tenant, runId })).statusCode).toBe(200);
    expect(p.get().calls.stop.filter((stopped) => stopped === runId)).toEqual([runId, runId]);
    // …and once the run carries its answer, there is no execution left to stop.
    await p.get().reconcile({ mode: 'reconcile', runId, tenantId: tenant, round: 1 });
    expect((await callApi(p.get(), { routeKey: 'POST /runs/{runId}/cancel', tenant, runId })).statusCode).toBe(200);
    expect(p.get().calls.stop.filter((stopped) => stopped === runId)).toEqual([runId, runId]);
  });

  it('answers 404 for a run that does not exist', async () => {
    const answer = await callApi(p.get(), { routeKey: 'POST /runs/{runId}/cancel', tenant: uniqueName('tenant'), runId: 'no-such-run' });
    expect(answer.statusCode).toBe(404);
    expect(errorOf(answer).code).toBe('RunNotFound');
  });

  it('answers 404, not 500, for a run id no run could have', async () => {
    const answer = await callApi(p.get(), { routeKey: 'GET /runs/{runId}', tenant: uniqueName('tenant'), runId: 'x'.repeat(129) });
    expect(answer.statusCode).toBe(404);
    expect(errorOf(answer).code).toBe('RunNotFound');
  });
});

describe('every route', () => {
  it('answers 403 to a token without the tenant claim', async () => {
    const answer = await post(null, halfYearRequest());
    expect(answer.statusCode).toBe(403);
    expect(errorOf(answer)).toMatchObject({ code: 'NoTenant', message: 'the token has no custom:tenant claim' });
  });

  it('answers 401 to a request without a bearer token, which the JWT authorizer never lets through', async () => {
    const event = apiEvent({ routeKey: 'POST /runs', tenant: uniqueName('tenant'), body: JSON.stringify(halfYearRequest()) });
    delete event.headers.authorization;
    const answer = answerOf(await p.get().api(event));
    expect(answer.statusCode).toBe(401);
    expect(errorOf(answer).code).toBe('Unauthorized');
  });

  it('answers 404 to a route it does not serve', async () => {
    const answer = await callApi(p.get(), { routeKey: 'DELETE /runs/{runId}', tenant: uniqueName('tenant'), runId: 'r' });
    expect(answer.statusCode).toBe(404);
    expect(errorOf(answer).code).toBe('RouteNotFound');
  });

  it('answers capacity_short in the 202 when a kind cannot meet the deadlines, and starts the run anyway', async () => {
    const { executions, calls } = recordingExecutions();
    const catalog = referenceRegistry.catalog();
    // tax-statements takes about 40 s, one at a time: A ends at 40 s, B at 80 s, past its 60 s deadline.
    const timed = {
      kinds: () => catalog.kinds(),
      get: (kind: string) => {
        const info = catalog.get(kind);
        return info && { ...info, typicalSeconds: 40 };
      },
    };
    const api = createHandler({
      ledger: p.get().ledger,
      executions,
      catalog: timed,
      capacity: { 'tax-statements': 1 },
      maxDeadlineSeconds: 900,
      tenantClaim: 'custom:tenant',
      newRunId: () => uniqueName('run'),
      logger: createLogger('api', { POWERTOOLS_LOG_LEVEL: 'SILENT' }),
    });
    const answer = answerOf(await api(apiEvent({ routeKey: 'POST /runs', tenant: uniqueName('tenant'), body: JSON.stringify(halfYearRequest()) })));

    expect(answer.statusCode).toBe(202);
    expect(RunAccepted.parse(answer.body).warnings).toEqual([
      {
        code: 'capacity_short',
        worker: 'tax-statements',
        path: 'subtasks.1.deadlineSeconds',
        message: '2 tax-statements subtasks, 1 at a time of about 40 s each, take 2 waves (80 s): 1 cannot finish by their 60 s deadline',
      },
    ]);
    expect(calls.start).toHaveLength(1);
  });

  it('turns an unexpected failure into a generic 500 that leaks nothing', async () => {
    const missingTable = uniqueName('fn-api-no-such-table');
    const { executions, calls } = recordingExecutions();
    const broken = createHandler({
      ledger: createLedger({ client: documentClient(), tableName: missingTable }),
      executions,
      catalog: referenceRegistry.catalog(),
      maxDeadlineSeconds: 900,
      tenantClaim: 'custom:tenant',
      newRunId: () => 'run-on-missing-table',
      logger: createLogger('api', { POWERTOOLS_LOG_LEVEL: 'SILENT' }),
    });
    const event = apiEvent({ routeKey: 'POST /runs', tenant: uniqueName('tenant'), body: JSON.stringify(halfYearRequest()) });

    const result = await broken(event);

    const answer = answerOf(result);
    expect(answer.statusCode).toBe(500);
    expect(answer.body).toEqual({ error: { code: 'InternalError', message: 'internal error', requestId: event.requestContext.requestId } });
    expect(JSON.stringify(result)).not.toContain(missingTable);
    expect(calls.start).toEqual([]);
  });
});

describe('logs', () => {
  const LogLine = z.looseObject({ message: z.string() });

  /** The JSON lines the handler's logger prints while `work` runs. */
  const logsOf = async (work: () => Promise<unknown>) => {
    const printed: string[] = [];
    const capture = (chunk: string | Uint8Array) => {
      printed.push(String(chunk));
      return true;
    };
    // Errors go to stderr, the rest to stdout.
    const spies = [vi.spyOn(process.stdout, 'write').mockImplementation(capture), vi.spyOn(process.stderr, 'write').mockImplementation(capture)];
    try {
      await work();
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    return printed
      .flatMap((chunk) => chunk.split('\n'))
      .filter((line) => line.startsWith('{'))
      .map((line) => LogLine.parse(JSON.parse(line)));
  };

  it("never tag a request's log lines with the run id of an earlier request on the same instance", async () => {
    const tenant = uniqueName('tenant');
    await post(tenant, halfYearRequest(), 'logged-key');
    const otherTenant = uniqueName('tenant');
    const otherRun = await acceptRun(p.get(), otherTenant, halfYearRequest());

    p.get().apiLogger.setLogLevel('INFO');
    const lines = await logsOf(async () => {
      await callApi(p.get(), { routeKey: 'GET /runs/{runId}', tenant: otherTenant, runId: otherRun });
      // POST /runs has no run id in its path; this one is refused with a conflict, which is logged.
      await post(tenant, halfYearRequest({ goal: 'Another goal' }), 'logged-key');
    }).finally(() => p.get().apiLogger.setLogLevel('ERROR'));

    const failure = lines.find((line) => line.message === 'request refused');
    expect(failure).toMatchObject({ tenantId: tenant, route: 'POST /runs', errorName: 'IdempotencyConflict' });
    expect(failure).not.toHaveProperty('runId');
  });
});

describe('the tenant claim', () => {
  const claim = (tenant: string | null, tokenTenant: unknown) =>
    callApi(p.get(), { routeKey: 'POST /runs', tenant, tokenTenant, body: JSON.stringify(halfYearRequest()) });

  it('accepts a tenant of exactly 256 bytes of UTF-8, ASCII or not', async () => {
    const ascii = uniqueName('t');
    const accented = uniqueName('t');
    // 'é' is 2 bytes of UTF-8.
    for (const tenant of [ascii.padEnd(256, 'a'), accented + 'é'.repeat(100) + 'a'.repeat(256 - accented.length - 200)]) {
      expect(new TextEncoder().encode(tenant).length).toBe(256);
      expect((await claim(tenant, tenant)).statusCode).toBe(202);
    }
  });

  it('refuses a tenant over 256 bytes of UTF-8 with 403 InvalidTenant, not 500, and writes nothing', async () => {
    // 257 ASCII characters; and 86 characters of 3 bytes each (258 bytes) under the old 256-character bound.
    for (const tenant of ['t'.repeat(257), '€'.repeat(86)]) {
      const answer = await claim(tenant, tenant);
      expect(answer.statusCode).toBe(403);
      expect(errorOf(answer)).toMatchObject({ code: 'InvalidTenant', message: "the token's custom:tenant claim must be at most 256 bytes of UTF-8" });
      expect(await itemsOfTenant(p.get(), tenant)).toEqual([]);
    }
  });

  it('refuses a tenant with a lone surrogate, which has no UTF-8 form, with 403 instead of 500', async () => {
    const answer = await claim('acme\ud800', 'acme\ud800');
    expect(answer.statusCode).toBe(403);
    expect(errorOf(answer)).toMatchObject({
      code: 'InvalidTenant',
      message: "the token's custom:tenant claim must be well-formed Unicode (it has a lone surrogate)",
    });
  });

  it('refuses a claim that is not a string in the token, although API Gateway delivers its text', async () => {
    // What API Gateway hands the function for each JSON value: scalars as text, arrays as [a b], objects as JSON.
    const cases = [
      { delivered: '123', token: 123, kind: 'a number' },
      { delivered: 'true', token: true, kind: 'a boolean' },
      { delivered: '[acme globex]', token: ['acme', 'globex'], kind: 'an array' },
      { delivered: '{"name":"acme"}', token: { name: 'acme' }, kind: 'an object' },
      // A local cloud that wrote null as "null" made every null-claim token one tenant.
      { delivered: 'null', token: null, kind: 'null' },
    ];
    for (const { delivered, token, kind } of cases) {
      const answer = await claim(delivered, token);
      expect(answer.statusCode).toBe(403);
      expect(errorOf(answer)).toMatchObject({ code: 'InvalidTenant', message: `the token's custom:tenant claim must be a string, not ${kind}` });
    }
  });

  it('refuses a null claim, which API Gateway leaves out of the claims, as no tenant', async () => {
    const answer = await claim(null, null);
    expect(answer.statusCode).toBe(403);
    expect(errorOf(answer).code).toBe('NoTenant');
  });

  it('accepts the string "123" as a tenant of its own', async () => {
    const tenant = `${Date.now() % 1_000_000}${Math.floor(Math.random() * 1e6)}`;
    expect((await claim(tenant, tenant)).statusCode).toBe(202);
  });
});

describe('a path run id', () => {
  it('answers 404, not 500, for a run id that is not well-formed Unicode (a lone surrogate)', async () => {
    for (const routeKey of ['GET /runs/{runId}', 'GET /runs/{runId}/subtasks', 'POST /runs/{runId}/cancel']) {
      const answer = await callApi(p.get(), { routeKey, tenant: uniqueName('tenant'), runId: 'r-\udc00' });
      expect(answer.statusCode).toBe(404);
      expect(errorOf(answer).code).toBe('RunNotFound');
    }
  });
});
