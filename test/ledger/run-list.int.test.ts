import { describe, expect, it } from 'vitest';
import { encodeCursor, listRuns, type ListRunsResult } from '../../lib/application/list-runs';
import { etagOf, watchRun } from '../../lib/application/watch-run';
import type { Answer, RunSummary } from '../../lib/contract';
import { toRunResource, type Ledger } from '../../lib/ledger';
import { uniqueName } from '../support/aws';
import { dispatched, ledgerTestTable, okOutcome, startRun, taxYearRequest } from './support';

const suite = ledgerTestTable('ledger-run-list');

/** Runs `fn` over `inputs`, `lanes` at a time (DynamoDB Local on two cores). */
const inLanes = async <T>(inputs: readonly T[], lanes: number, fn: (input: T) => Promise<void>): Promise<void> => {
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < inputs.length) await fn(inputs[next++] as T);
    }),
  );
};

/** Creation instants two runs share, so the run id decides their order. */
const createdAt = (index: number): string => new Date(Date.parse('2040-01-01T00:00:00.000Z') + Math.floor(index / 2) * 1000).toISOString();

interface Created {
  readonly runId: string;
  readonly createdAt: string;
}

const createRuns = async (tenantId: string, count: number, offset = 0): Promise<Created[]> => {
  const runs = Array.from({ length: count }, (_, index) => ({
    runId: `run-${String(index).padStart(3, '0')}-${uniqueName('r')}`,
    createdAt: createdAt(index + offset),
  }));
  await inLanes(runs, 6, async (run) => {
    await suite.ledger.createRun({ tenantId, runId: run.runId, createdAt: run.createdAt, request: taxYearRequest({ goal: `goal of ${run.runId}` }) });
  });
  return runs;
};

/** Newest first: creation time descending, then run id descending (worked out here, not read back). */
const newestFirst = (runs: readonly Created[]): string[] =>
  [...runs].sort((a, b) => (a.createdAt === b.createdAt ? (a.runId < b.runId ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1)).map((run) => run.runId);

const pageOk = (result: ListRunsResult) => {
  if (!result.ok) throw new Error(`expected a page, got ${JSON.stringify(result.problems)}`);
  return result.list;
};

/** Every page of a listing, following nextCursor. */
const allPages = async (
  tenantId: string,
  query: Record<string, string>,
  between?: (page: number) => Promise<void>,
): Promise<{ runs: RunSummary[]; pages: number }> => {
  const runs: RunSummary[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const list = pageOk(await listRuns(suite.ledger, tenantId, { ...query, ...(cursor === undefined ? {} : { cursor }) }));
    runs.push(...list.runs);
    cursor = list.nextCursor;
    pages += 1;
    await between?.(pages);
  } while (cursor !== undefined);
  return { runs, pages };
};

const problemsOf = async (tenantId: string, query: Record<string, string>) => {
  const result = await listRuns(suite.ledger, tenantId, query);
  if (result.ok) throw new Error('expected the query to be refused');
  return result.problems.map((problem) => [problem.path, problem.code]);
};

describe('GET /runs over the run list index', () => {
  const tenant = uniqueName('tenant-a');
  const other = uniqueName('tenant-b');
  let runs: Created[] = [];
  let otherRuns: Created[] = [];

  it('pages through 250 runs of one tenant newest first, with no duplicates, no omissions and none of another tenant', { timeout: 240_000 }, async () => {
    // The other tenant's runs are created at the same instants, so a leak would interleave.
    [runs, otherRuns] = await Promise.all([createRuns(tenant, 250), createRuns(other, 30)]);
    const { runs: listed, pages } = await allPages(tenant, { limit: '17' });
    const ids = listed.map((run) => run.runId);
    expect(pages).toBe(Math.ceil(250 / 17));
    expect(new Set(ids).size).toBe(250);
    expect(ids).toEqual(newestFirst(runs));
    const first = listed[0]!;
    expect(first).toEqual({
      runId: newestFirst(runs)[0],
      status: 'running',
      goal: `goal of ${first.runId}`,
      createdAt: createdAt(249),
      updatedAt: createdAt(249),
      complete: null,
      progress: { dispatched: 0, terminal: 0, byState: { pending: 0, running: 0, ok: 0, timed_out: 0, invalid: 0, empty: 0, cancelled: 0 } },
    });
    const theirs = await allPages(other, { limit: '100' });
    expect(theirs.runs.map((run) => run.runId)).toEqual(newestFirst(otherRuns));
    expect(theirs.runs.some((run) => ids.includes(run.runId))).toBe(false);
  });

  it('filters by status, and a run that changes status between pages is listed once', { timeout: 120_000 }, async () => {
    const order = newestFirst(runs);
    // Cancel ten runs spread over the list; while paging, cancel one the listing has not reached.
    const cancelled = order.filter((_, index) => index % 25 === 3);
    await inLanes(cancelled, 4, async (runId) => {
      await suite.ledger.cancelRun(tenant, runId);
    });
    const listedCancelled = await allPages(tenant, { status: 'cancelled', limit: '4' });
    expect(listedCancelled.runs.map((run) => run.runId)).toEqual(cancelled);
    expect(listedCancelled.runs.every((run) => run.status === 'cancelled' && run.complete === null)).toBe(true);
    const late = order[200]!;
    const { runs: listed } = await allPages(tenant, { limit: '50' }, async (page) => {
      if (page === 1) await suite.ledger.cancelRun(tenant, late);
    });
    expect(listed.map((run) => run.runId)).toEqual(order);
    expect(listed.find((run) => run.runId === late)?.status).toBe('cancelled');
    const running = await allPages(tenant, { status: 'running', limit: '100' });
    expect(running.runs).toHaveLength(250 - cancelled.length - 1);
  });

  it('refuses a garbled, forged, foreign or re-filtered cursor, and bad parameters, naming the parameter', async () => {
    const page = pageOk(await listRuns(suite.ledger, tenant, { limit: '5' }));
    const cursor = page.nextCursor!;
    expect(await problemsOf(tenant, { cursor: 'not a cursor' })).toEqual([['cursor', 'invalid_cursor']]);
    expect(await problemsOf(tenant, { cursor: Buffer.from('{"v":1}').toString('base64url') })).toEqual([['cursor', 'invalid_cursor']]);
    // Another tenant presenting it, or this tenant with another filter.
    expect(await problemsOf(other, { cursor })).toEqual([['cursor', 'invalid_cursor']]);
    expect(await problemsOf(tenant, { cursor, status: 'running' })).toEqual([['cursor', 'invalid_cursor']]);
    // Well-formed, for this tenant and filter, but naming a position no run of this tenant has.
    const fifth = page.runs[4]!;
    expect(await problemsOf(tenant, { cursor: encodeCursor(tenant, undefined, { createdAt: '2039-01-01T00:00:00.000Z', runId: fifth.runId }) })).toEqual([
      ['cursor', 'invalid_cursor'],
    ]);
    expect(
      await problemsOf(tenant, {
        cursor: encodeCursor(tenant, undefined, {
          createdAt: fifth.createdAt,
          runId: runs.find((run) => run.runId !== fifth.runId)!.runId.replace('run', 'nur'),
        }),
      }),
    ).toEqual([['cursor', 'invalid_cursor']]);
    // The other tenant's run ids are not positions in this tenant's list.
    const theirs = pageOk(await listRuns(suite.ledger, other, { limit: '1' })).runs[0]!;
    expect(await problemsOf(tenant, { cursor: encodeCursor(tenant, undefined, { createdAt: theirs.createdAt, runId: theirs.runId }) })).toEqual([
      ['cursor', 'invalid_cursor'],
    ]);
    expect(await problemsOf(tenant, { limit: '0' })).toEqual([['limit', 'too_small']]);
    expect(await problemsOf(tenant, { limit: '101' })).toEqual([['limit', 'too_big']]);
    expect(await problemsOf(tenant, { limit: '2.5' })).toEqual([['limit', 'invalid_format']]);
    expect(await problemsOf(tenant, { status: 'done' })).toEqual([['status', 'invalid_value']]);
    // An unknown parameter (`?sort=asc`) never reaches the use case: the router refuses it on every route.
  });
});

describe('run summary progress and the change version', () => {
  const answer: Answer = {
    text: 'All four quarters.',
    result: {},
    coverage: {
      complete: true,
      missingQuestions: [],
      degradedReason: [],
      partitions: 2,
      overlaps: [],
      gaps: [],
      problems: [],
      statement: 'Coverage: complete.',
    },
  };

  it('counts a running run live, stores the final progress and complete at the end, and bumps the version on each state change', async () => {
    const tenantId = uniqueName('tenant');
    const runId = await startRun(suite.ledger, tenantId, [dispatched('A', '2025-01-01', '2025-07-01'), dispatched('B', '2025-07-01', '2026-01-01')]);
    const summary = async () => pageOk(await listRuns(suite.ledger, tenantId, {})).runs[0]!;
    const v0 = await suite.ledger.runVersion(tenantId, runId);
    const claim = await suite.ledger.claimSubtask({ tenantId, runId, subtaskId: 'A', workerId: 'w', leaseMs: 30_000 });
    const v1 = await suite.ledger.runVersion(tenantId, runId);
    expect((await summary()).progress).toMatchObject({ dispatched: 2, terminal: 0, byState: { pending: 1, running: 1 } });
    await suite.ledger.recordOutcome(claim, okOutcome('A', '2025-01-01', '2025-06-30', 10));
    const v2 = await suite.ledger.runVersion(tenantId, runId);
    // The round commit, the claim and the outcome each moved it.
    expect([v0, v1, v2]).toEqual([1, 2, 3]);
    await suite.ledger.finishRun({ tenantId, runId, status: 'succeeded', answer });
    const ended = await summary();
    expect(ended).toMatchObject({
      runId,
      status: 'succeeded',
      complete: true,
      progress: { dispatched: 2, terminal: 2, byState: { ok: 1, cancelled: 1, pending: 0 } },
    });
    const resource = toRunResource((await suite.ledger.getRun(tenantId, runId))!);
    expect(ended.progress).toEqual(resource.progress);
    expect(ended.updatedAt).toBe(resource.updatedAt);
    expect(await suite.ledger.runVersion(tenantId, runId)).toBe(4);
  });

  it('a long-poll answers not modified when nothing changes, and the changed run as soon as the version moves', async () => {
    const tenantId = uniqueName('tenant');
    const runId = await startRun(suite.ledger, tenantId, [dispatched('A', '2025-01-01', '2026-01-01')]);
    const first = await watchRun(suite.ledger, { tenantId, runId });
    if (first.kind !== 'ok') throw new Error('expected the run');
    expect(first.etag).toBe(etagOf(first.resource));
    // A fake clock: each sleep advances it, so "20 s" passes in a few polls without waiting.
    let now = 0;
    const sleeps: number[] = [];
    const clock = {
      now: () => now,
      sleep: async (ms: number) => {
        sleeps.push(ms);
        now += ms;
      },
      pollMs: 5_000,
    };
    const unchanged = await watchRun(suite.ledger, { tenantId, runId, ifNoneMatch: first.etag, waitSeconds: 20 }, clock);
    expect(unchanged).toEqual({ kind: 'not_modified', etag: first.etag });
    expect(sleeps).toEqual([5_000, 5_000, 5_000, 5_000]);
    // The subtask is claimed during the second poll's sleep: the wait ends at the next version read.
    now = 0;
    sleeps.length = 0;
    const changing = {
      ...clock,
      sleep: async (ms: number) => {
        sleeps.push(ms);
        now += ms;
        if (sleeps.length === 2) await suite.ledger.claimSubtask({ tenantId, runId, subtaskId: 'A', workerId: 'w', leaseMs: 30_000 });
      },
    };
    const changed = await watchRun(suite.ledger, { tenantId, runId, ifNoneMatch: first.etag, waitSeconds: 20 }, changing);
    expect(sleeps).toHaveLength(2);
    expect(changed.kind).toBe('ok');
    if (changed.kind !== 'ok') return;
    expect(changed.resource.subtasks[0]?.state).toBe('running');
    expect(changed.etag).not.toBe(first.etag);
    expect(await watchRun(suite.ledger, { tenantId, runId, ifNoneMatch: `W/${changed.etag}, "other"` })).toEqual({ kind: 'not_modified', etag: changed.etag });
  });

  it('a long-poll ends early enough that the reads after it fit before answerBy, paced by the slowest read', async () => {
    const tenantId = uniqueName('tenant');
    const runId = await startRun(suite.ledger, tenantId, [dispatched('A', '2025-01-01', '2026-01-01')]);
    const first = await watchRun(suite.ledger, { tenantId, runId });
    if (first.kind !== 'ok') throw new Error('expected the run');
    // A fake clock on which every read of the run takes 3 s (a large run under load).
    let now = 0;
    const sleeps: number[] = [];
    const slowLedger: Ledger = {
      ...suite.ledger,
      getRunPage: async (request) => {
        now += 3_000;
        return suite.ledger.getRunPage(request);
      },
    };
    const clock = {
      now: () => now,
      sleep: async (ms: number) => {
        sleeps.push(ms);
        now += ms;
      },
      pollMs: 5_000,
    };
    // Asked to wait 20 s, with the answer due at 20 s: the first read ends at 3 s, so the wait must
    // end by 20 − 2 × 3 = 14 s (a read on a change, then the final read), and the answer is ready at 17 s.
    const answer = await watchRun(slowLedger, { tenantId, runId, ifNoneMatch: first.etag, waitSeconds: 20, answerBy: 20_000 }, clock);
    expect(answer).toEqual({ kind: 'not_modified', etag: first.etag });
    expect(sleeps).toEqual([5_000, 5_000, 1_000]);
    expect(now).toBe(17_000);
    // Without answerBy the same wait runs its 20 s out, and answers at 23 s.
    now = 0;
    sleeps.length = 0;
    await watchRun(slowLedger, { tenantId, runId, ifNoneMatch: first.etag, waitSeconds: 20 }, clock);
    expect(sleeps).toEqual([5_000, 5_000, 5_000, 2_000]);
    expect(now).toBe(23_000);
  });
});
