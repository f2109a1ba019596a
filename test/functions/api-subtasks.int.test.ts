import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { createHandler } from '../../functions/api';
import { encodeSubtaskCursor } from '../../lib/application/list-subtasks';
import { encodeCursor } from '../../lib/application/list-runs';
import { PAGED_RUN_SUBTASKS, RunResource, SUBTASK_PAGE_LIMITS, SubtaskList, type SubtaskView } from '../../lib/contract';
import { createLedger, type Ledger } from '../../lib/ledger';
import { createLogger } from '../../lib/runtime/lambda';
import { referenceRegistry } from '../../examples/app';
import { documentClient, uniqueName } from '../support/aws';
import { dispatched, ledgerTestTable, okOutcome, taxYearRequest } from '../ledger/support';
import { answerOf, apiEvent, errorOf, recordingExecutions, type ApiAnswer, type ApiCall } from './support';

/**
 * `GET /runs/{runId}/subtasks` and the paged forms of `GET /runs/{runId}`, through the api handler
 * over the real ledger on DynamoDB Local.
 */
const suite = ledgerTestTable('fn-subtasks');

/** Paged past 20 subtasks, 5 to the resource's first page, so 23 subtasks are a large run. */
const SMALL = { pagedAbove: 20, pageSize: 5 } as const;

const handlers = (ledger: Ledger) => {
  const deps = {
    ledger,
    executions: recordingExecutions().executions,
    catalog: referenceRegistry.catalog(),
    maxDeadlineSeconds: 900,
    tenantClaim: 'custom:tenant',
    newRunId: () => uniqueName('run'),
    logger: createLogger('api', { POWERTOOLS_LOG_LEVEL: 'ERROR' }),
  };
  return { standard: createHandler(deps), small: createHandler({ ...deps, runForms: SMALL }) };
};

let api: ReturnType<typeof handlers>;
beforeAll(() => {
  api = handlers(suite.ledger);
});

const call = async (which: 'standard' | 'small', request: ApiCall): Promise<ApiAnswer> => answerOf(await api[which](apiEvent(request)));
const subtasksOf = (tenant: string, runId: string, query: Record<string, string> = {}) =>
  call('standard', { routeKey: 'GET /runs/{runId}/subtasks', tenant, runId, query });

/** s-1 … s-23, dispatched in that order. */
const IDS = Array.from({ length: 23 }, (_, index) => `s-${index + 1}`);
/** The same ids in sort-key order (`SUB#<id>`, compared character by character), written out by hand. */
const ID_ORDER = [
  ...['s-1', 's-10', 's-11', 's-12', 's-13', 's-14', 's-15', 's-16', 's-17', 's-18', 's-19'],
  ...['s-2', 's-20', 's-21', 's-22', 's-23'],
  ...['s-3', 's-4', 's-5', 's-6', 's-7', 's-8', 's-9'],
];

/**
 * A running run of 23 committed subtasks: s-2 ended ok, s-12's result came after its deadline
 * (late evidence), and a subtask of a round whose commit marker is not written yet (s-15x, round
 * 2) sits among them in the key range.
 */
const bigRun = async (tenantId: string): Promise<string> => {
  const runId = uniqueName('run');
  const { ledger, clock } = suite;
  clock.set('2040-06-01T12:00:00.000Z');
  await ledger.createRun({ tenantId, runId, request: taxYearRequest() });
  const subtasks = IDS.map((id, index) =>
    dispatched(id, `2025-01-${String(index + 1).padStart(2, '0')}`, `2025-01-${String(index + 2).padStart(2, '0')}`, {
      deadline: id === 's-12' ? '2040-06-01T12:01:00.000Z' : '2040-06-01T13:00:00.000Z',
    }),
  );
  await ledger.appendRound({ tenantId, runId, round: 1, subtasks });
  const ok = await ledger.claimSubtask({ tenantId, runId, subtaskId: 's-2', workerId: 'w-1', leaseMs: 60_000 });
  await ledger.recordOutcome(ok, okOutcome('s-2', '2025-01-02', '2025-01-02', 3));
  const late = await ledger.claimSubtask({ tenantId, runId, subtaskId: 's-12', workerId: 'w-1', leaseMs: 120_000 });
  clock.set('2040-06-01T12:01:00.001Z');
  await expect(ledger.recordOutcome(late, okOutcome('s-12', '2025-01-12', '2025-01-12', 1))).rejects.toMatchObject({
    name: 'DeadlinePassed',
    keptAsLateEvidence: true,
  });
  const client = documentClient();
  const pk = `T#${encodeURIComponent(tenantId)}#R#${encodeURIComponent(runId)}`;
  const image = (await client.send(new GetCommand({ TableName: suite.tableName, Key: { pk, sk: 'SUB#s-15' } }))).Item;
  await client.send(new PutCommand({ TableName: suite.tableName, Item: { ...image, sk: 'SUB#s-15x', subtaskId: 's-15x', round: 2, position: 0 } }));
  return runId;
};

/** Every page at `limit`, following `nextCursor`. */
const allPages = async (tenant: string, runId: string, limit: number): Promise<SubtaskView[][]> => {
  const pages: SubtaskView[][] = [];
  let cursor: string | undefined;
  do {
    const answer = await subtasksOf(tenant, runId, { limit: String(limit), ...(cursor === undefined ? {} : { cursor }) });
    expect(answer.statusCode).toBe(200);
    const page = SubtaskList.parse(answer.body);
    pages.push(page.subtasks);
    cursor = page.nextCursor;
  } while (cursor !== undefined && pages.length < 50);
  return pages;
};

const fullRun = async (tenant: string, runId: string): Promise<RunResource> => {
  const answer = await call('standard', { routeKey: 'GET /runs/{runId}', tenant, runId });
  expect(answer.statusCode).toBe(200);
  return RunResource.parse(answer.body);
};

const cursorIn = (link: string | undefined): string => new URL(link ?? '', 'https://api.example').searchParams.get('cursor') ?? '';

describe('GET /runs/{runId}/subtasks', () => {
  it('pages 23 subtasks at limit 5 as 5, 5, 5, 5, 3 in id order, each once, each as the run resource shows it', async () => {
    const tenant = uniqueName('tenant');
    const runId = await bigRun(tenant);

    const pages = await allPages(tenant, runId, 5);
    expect(pages.map((page) => page.length)).toEqual([5, 5, 5, 5, 3]);
    expect(pages.flat().map((view) => view.id)).toEqual(ID_ORDER);

    // The whole resource (23 is under the standard threshold) shows the same subtasks, in dispatch order.
    const whole = await fullRun(tenant, runId);
    expect(whole.subtasksPage).toBeUndefined();
    expect(whole.subtasks.map((view) => view.id)).toEqual(IDS);
    const byId = new Map(whole.subtasks.map((view) => [view.id, view]));
    for (const view of pages.flat()) expect(view).toEqual(byId.get(view.id));
    expect(pages.flat().find((view) => view.id === 's-2')).toMatchObject({
      state: 'ok',
      observed: { minDate: '2025-01-02', maxDate: '2025-01-02', recordCount: 3 },
    });
    expect(pages.flat().find((view) => view.id === 's-12')?.late).toEqual([expect.objectContaining({ refusedBecause: 'deadline_passed', generation: 1 })]);
  });

  it('ends without a cursor when the last page is full, and defaults to 100 a page', async () => {
    const tenant = uniqueName('tenant');
    const runId = await bigRun(tenant);
    expect((await allPages(tenant, runId, 23)).map((page) => page.length)).toEqual([23]);
    const first = SubtaskList.parse((await subtasksOf(tenant, runId)).body);
    expect(SUBTASK_PAGE_LIMITS.default).toBe(100);
    expect(first).toEqual({ subtasks: expect.any(Array) });
    expect(first.subtasks).toHaveLength(23);
  });

  it("answers another tenant's run and an unknown run with 404", async () => {
    const tenant = uniqueName('tenant');
    const runId = await bigRun(tenant);
    for (const answer of [await subtasksOf(uniqueName('tenant'), runId), await subtasksOf(tenant, uniqueName('run'))]) {
      expect(answer.statusCode).toBe(404);
      expect(errorOf(answer)).toMatchObject({ code: 'RunNotFound' });
    }
  });

  it('refuses a garbled, forged, foreign or other run’s cursor with 400 naming cursor', async () => {
    const tenant = uniqueName('tenant');
    const runId = await bigRun(tenant);
    const otherRun = await bigRun(tenant);
    const cases: [string, string][] = [
      ['not a cursor!', 'is not a cursor this API returned'],
      [Buffer.from('{"v":1}').toString('base64url'), 'is not a cursor this API returned'],
      // Well-formed, this tenant's and this run's, but naming a subtask the run does not have (or has not committed).
      [encodeSubtaskCursor(tenant, runId, 's-99'), 'is not a cursor this API returned'],
      [encodeSubtaskCursor(tenant, runId, 's-15x'), 'is not a cursor this API returned'],
      [encodeSubtaskCursor(uniqueName('tenant'), runId, 's-1'), 'was returned to another tenant'],
      [encodeSubtaskCursor(tenant, otherRun, 's-1'), 'was returned for another run'],
      [encodeCursor(tenant, undefined, { createdAt: '2040-06-01T12:00:00.000Z', runId }), 'is not a cursor this API returned'],
    ];
    for (const [cursor, message] of cases) {
      const answer = await subtasksOf(tenant, runId, { cursor });
      expect(answer.statusCode, cursor).toBe(400);
      expect(errorOf(answer)).toMatchObject({ code: 'InvalidQuery', issues: [{ path: 'cursor', code: 'invalid_cursor', message }] });
    }
  });

  it('refuses a bad limit or an unknown parameter with 400 naming it', async () => {
    const tenant = uniqueName('tenant');
    const runId = await bigRun(tenant);
    for (const limit of ['0', '1001', 'ten', '-1', '']) {
      const answer = await subtasksOf(tenant, runId, { limit });
      expect(answer.statusCode, limit).toBe(400);
      expect(errorOf(answer).issues).toEqual([expect.objectContaining({ path: 'limit', message: 'must be a whole number from 1 to 1000' })]);
    }
    const unknown = await subtasksOf(tenant, runId, { status: 'ok' });
    expect(errorOf(unknown).issues).toEqual([expect.objectContaining({ path: 'status', code: 'unknown_parameter' })]);
  });
});

describe('GET /runs/{runId} of a large run', () => {
  it('carries the first page in id order and subtasksPage linking the rest, which the subtasks route tiles', async () => {
    const tenant = uniqueName('tenant');
    const runId = await bigRun(tenant);
    const whole = await fullRun(tenant, runId);

    const answer = await call('small', { routeKey: 'GET /runs/{runId}', tenant, runId });
    expect(answer.statusCode).toBe(200);
    const paged = RunResource.parse(answer.body);
    expect(paged.subtasks.map((view) => view.id)).toEqual(ID_ORDER.slice(0, 5));
    expect(paged.subtasksPage).toEqual({
      returned: 5,
      total: 23,
      next: `/runs/${runId}/subtasks?cursor=${encodeURIComponent(encodeSubtaskCursor(tenant, runId, 's-13'))}`,
    });
    const { subtasks: _all, ...header } = whole;
    expect(paged).toMatchObject(header);

    const rest: string[] = [];
    let cursor: string | undefined = cursorIn(paged.subtasksPage?.next);
    while (cursor !== undefined) {
      const page = SubtaskList.parse((await subtasksOf(tenant, runId, { cursor, limit: '7' })).body);
      rest.push(...page.subtasks.map((view) => view.id));
      cursor = page.nextCursor;
    }
    expect([...paged.subtasks.map((view) => view.id), ...rest]).toEqual(ID_ORDER);
  });

  it('gives the small form on request: no subtasks, the same counts and coverage, and a tag of its own', async () => {
    const tenant = uniqueName('tenant');
    const runId = await bigRun(tenant);
    const full = await call('standard', { routeKey: 'GET /runs/{runId}', tenant, runId });
    const none = await call('standard', { routeKey: 'GET /runs/{runId}', tenant, runId, query: { subtasks: 'none' } });
    const page = await call('standard', { routeKey: 'GET /runs/{runId}', tenant, runId, query: { subtasks: 'page' } });

    const small = RunResource.parse(none.body);
    expect(small.subtasks).toEqual([]);
    expect(small.subtasksPage).toEqual({ returned: 0, total: 23, next: `/runs/${runId}/subtasks` });
    const { subtasks: _all, ...header } = RunResource.parse(full.body);
    expect(small).toMatchObject(header);
    expect(small.progress).toEqual({
      dispatched: 23,
      terminal: 1,
      byState: { pending: 21, running: 1, ok: 1, timed_out: 0, invalid: 0, empty: 0, cancelled: 0 },
    });
    // The standard first page holds 100: all 23, so nothing follows.
    expect(RunResource.parse(page.body).subtasksPage).toEqual({ returned: 23, total: 23 });

    const tags = [full, none, page].map((answer) => answer.headers.etag);
    expect(new Set(tags).size).toBe(3);
    // Each form answers 304 to its own tag only.
    const again = await api.standard(
      apiEvent({ routeKey: 'GET /runs/{runId}', tenant, runId, query: { subtasks: 'none' }, headers: { 'if-none-match': tags[1] ?? '' } }),
    );
    expect(again).toMatchObject({ statusCode: 304, headers: { etag: tags[1] } });
    const otherForm = await call('standard', { routeKey: 'GET /runs/{runId}', tenant, runId, headers: { 'if-none-match': tags[1] ?? '' } });
    expect(otherForm.statusCode).toBe(200);
  });

  it('answers a long-poll of the small form as soon as the run changes', async () => {
    const tenant = uniqueName('tenant');
    const runId = await bigRun(tenant);
    const first = await call('small', { routeKey: 'GET /runs/{runId}', tenant, runId, query: { subtasks: 'none' } });
    const etag = first.headers.etag ?? '';
    const waiting = api.small(
      apiEvent({ routeKey: 'GET /runs/{runId}', tenant, runId, query: { subtasks: 'none' }, headers: { 'if-none-match': etag, prefer: 'wait=10' } }),
    );
    await suite.ledger.claimSubtask({ tenantId: tenant, runId, subtaskId: 's-3', workerId: 'w-2', leaseMs: 60_000 });
    const changed = answerOf(await waiting);
    expect(changed.statusCode).toBe(200);
    expect(changed.headers['preference-applied']).toBe('wait=10');
    expect(changed.headers.etag).not.toBe(etag);
    expect(RunResource.parse(changed.body)).toMatchObject({ subtasks: [], progress: { byState: { running: 2, pending: 20 } } });
  });

  it('ends a long-poll early enough to answer within the invocation: 304 inside 4 s of remaining time, not after the 10 s asked', async () => {
    const tenant = uniqueName('tenant');
    const runId = await bigRun(tenant);
    const first = await call('small', { routeKey: 'GET /runs/{runId}', tenant, runId, query: { subtasks: 'none' } });
    const etag = first.headers.etag ?? '';
    const remainingMs = 4_000;
    const invoked = Date.now();
    const context = { getRemainingTimeInMillis: () => Math.max(0, remainingMs - (Date.now() - invoked)) };
    const answer = await api.small(
      apiEvent({ routeKey: 'GET /runs/{runId}', tenant, runId, query: { subtasks: 'none' }, headers: { 'if-none-match': etag, prefer: 'wait=10' } }),
      context,
    );
    // Nothing changed: not modified, answered before the function's time ran out.
    expect(answer).toMatchObject({ statusCode: 304, headers: { etag } });
    expect(Date.now() - invoked).toBeLessThan(remainingMs);
  });

  it('refuses a subtasks form other than page or none with 400 naming subtasks', async () => {
    const tenant = uniqueName('tenant');
    const runId = await bigRun(tenant);
    const answer = await call('standard', { routeKey: 'GET /runs/{runId}', tenant, runId, query: { subtasks: 'all' } });
    expect(answer.statusCode).toBe(400);
    expect(errorOf(answer)).toMatchObject({ code: 'InvalidQuery', issues: [{ path: 'subtasks', message: 'must be one of page, none' }] });
  });

  it('is answered by POST /runs/{runId}/cancel with the first page too', async () => {
    const tenant = uniqueName('tenant');
    const runId = await bigRun(tenant);
    const answer = await call('small', { routeKey: 'POST /runs/{runId}/cancel', tenant, runId });
    expect(answer.statusCode).toBe(200);
    const cancelled = RunResource.parse(answer.body);
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.subtasks.map((view) => view.id)).toEqual(ID_ORDER.slice(0, 5));
    expect(cancelled.subtasksPage).toMatchObject({ returned: 5, total: 23 });
  });

  it('pages past 1,000 subtasks by default, so every run of up to 1,000 is answered as before', () => {
    expect(PAGED_RUN_SUBTASKS).toBe(1000);
  });
});

/** What one read read: its command, how many items, and whether they were projected to a few attributes. */
interface CountedRead {
  readonly command: string;
  readonly scanned: number;
  readonly projected: boolean;
}

/** A document client that counts the items each Query and GetItem read. */
const countingClient = (): { client: DynamoDBDocumentClient; reads: CountedRead[] } => {
  const client = documentClient();
  const reads: CountedRead[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      const output = result.output as { ScannedCount?: number; Item?: unknown };
      const projected = (args.input as { ProjectionExpression?: string }).ProjectionExpression !== undefined;
      reads.push({ command: String(context.commandName), scanned: output.ScannedCount ?? (output.Item === undefined ? 0 : 1), projected });
      return result;
    },
    { step: 'initialize', name: 'countReads' },
  );
  return { client, reads };
};

describe('what a page reads', () => {
  it('reads the run item, the page’s subtask items plus one, and the page’s late evidence, never the whole run', async () => {
    const tenant = uniqueName('tenant');
    const runId = await bigRun(tenant);
    const { client, reads } = countingClient();
    const ledger = createLedger({ client, tableName: suite.tableName, now: suite.clock.now });

    const first = await ledger.subtaskPage({ tenantId: tenant, runId, limit: 5 });
    expect(first).toMatchObject({ kind: 'page', more: true });
    // GetItem RUN; the Query of s-1, s-10 … s-13 and one more (s-14) to know that more follow; LATE# of s-1 … s-13 (s-12's).
    expect(reads.map((read) => [read.command, read.scanned])).toEqual([
      ['GetItemCommand', 1],
      ['QueryCommand', 6],
      ['QueryCommand', 1],
    ]);

    reads.length = 0;
    // From s-13: the cursor's own item, the page (s-14, s-15, s-16, s-17, s-18), one more; s-15x (uncommitted) is read and skipped.
    const second = await ledger.subtaskPage({ tenantId: tenant, runId, limit: 5, after: 's-13' });
    expect(second.kind === 'page' ? second.subtasks.map((item) => item.subtaskId) : second).toEqual(['s-14', 's-15', 's-16', 's-17', 's-18']);
    expect(reads.map((read) => [read.command, read.scanned])).toEqual([
      ['GetItemCommand', 1],
      ['QueryCommand', 7],
      ['QueryCommand', 1],
      ['QueryCommand', 0],
    ]);

    reads.length = 0;
    await ledger.getRun(tenant, runId);
    const whole = reads.reduce((sum, read) => sum + read.scanned, 0);
    // RUN, META, SUMMARY, 24 subtask items (one uncommitted) and one late item.
    expect(whole).toBe(28);
  });

  it('reads a large run for its paged form without its subtask items: RUN, META, every subtask projected to its state, and the page', async () => {
    const tenant = uniqueName('tenant');
    const runId = await bigRun(tenant);
    const { client, reads } = countingClient();
    const ledger = createLedger({ client, tableName: suite.tableName, now: suite.clock.now });

    const read = await ledger.getRunPage({ tenantId: tenant, runId, limit: 5, wholeUpTo: SMALL.pagedAbove });
    expect(read?.kind === 'page' ? read.record.progress : read).toEqual({
      dispatched: 23,
      terminal: 1,
      byState: { pending: 21, running: 1, ok: 1, timed_out: 0, invalid: 0, empty: 0, cancelled: 0 },
    });
    // GetItem RUN and META (at once, so in either order); the 24 subtask keys (s-15x uncommitted
    // among them) projected to round, state and hedgeOf; the page's Query (5 and one more); its LATE# range.
    const byCommand = (a: CountedRead, b: CountedRead): number => a.command.localeCompare(b.command) || b.scanned - a.scanned;
    expect([...reads].sort(byCommand)).toEqual([
      { command: 'GetItemCommand', scanned: 1, projected: false },
      { command: 'GetItemCommand', scanned: 1, projected: false },
      { command: 'QueryCommand', scanned: 24, projected: true },
      { command: 'QueryCommand', scanned: 6, projected: false },
      { command: 'QueryCommand', scanned: 1, projected: false },
    ]);

    reads.length = 0;
    // At or under `wholeUpTo` the run is read whole: RUN and META, then the partition's 28 items.
    expect((await ledger.getRunPage({ tenantId: tenant, runId, limit: 5, wholeUpTo: 23 }))?.kind).toBe('whole');
    expect(reads.map((one) => one.scanned).reduce((sum, scanned) => sum + scanned, 0)).toBe(2 + 28);
  });

  it('cancels a large run and answers its first page with every open subtask shown cancelled, as the whole read shows them', async () => {
    const tenant = uniqueName('tenant');
    const runId = await bigRun(tenant);
    const answer = await call('small', { routeKey: 'POST /runs/{runId}/cancel', tenant, runId });
    const cancelled = RunResource.parse(answer.body);
    const { subtasks: all, ...header } = await fullRun(tenant, runId);

    expect(cancelled).toMatchObject(header);
    // s-2 ended ok before the cancel; the 22 others were open (s-12 still running: its late result was refused).
    expect(cancelled.progress).toEqual({
      dispatched: 23,
      terminal: 23,
      byState: { pending: 0, running: 0, ok: 1, timed_out: 0, invalid: 0, empty: 0, cancelled: 22 },
    });
    const byId = new Map(all.map((view) => [view.id, view]));
    expect(cancelled.subtasks).toEqual(ID_ORDER.slice(0, 5).map((id) => byId.get(id)));
  });
});
