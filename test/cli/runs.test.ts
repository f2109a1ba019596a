import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { TOKEN_FLAG_WARNING } from '../../lib/cli/api-target';
import { UsageError } from '../../lib/cli/errors';
import type { CliIo } from '../../lib/cli/router';
import { runLine, runsCommand } from '../../lib/cli/runs';
import { RunStatus, type RunSummary } from '../../lib/contract';

/**
 * `tessera runs` against a real HTTP server on 127.0.0.1 that answers `GET /runs` as the API does:
 * newest first, a page at a time, `nextCursor` while more runs remain.
 */

const terminal = () => {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (text) => void out.push(text), err: (text) => void err.push(text), readText: async () => '' };
  return { io, out, err };
};

const summary = (n: number, overrides: Partial<RunSummary> = {}): RunSummary => ({
  runId: `00000000-0000-4000-8000-00000000000${n}`,
  status: 'succeeded',
  goal: `goal ${n}`,
  createdAt: `2026-11-0${n}T10:00:00.000Z`,
  updatedAt: `2026-11-0${n}T10:01:00.000Z`,
  complete: true,
  progress: { dispatched: 4, terminal: 4, byState: { ok: 4 } },
  ...overrides,
});

/** Five runs, newest first, served two per page whatever `limit` asks, so paging is exercised. */
const RUNS = [5, 4, 3, 2, 1].map((n) => summary(n));

interface Seen {
  readonly url: URL;
  readonly authorization: string | undefined;
}

const fakeApi = async (answer?: (request: IncomingMessage) => { status: number; body: unknown } | undefined, runs: readonly RunSummary[] = RUNS) => {
  const seen: Seen[] = [];
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    seen.push({ url, authorization: request.headers.authorization });
    const custom = answer?.(request);
    if (custom !== undefined) {
      response.writeHead(custom.status, { 'content-type': 'application/json' }).end(JSON.stringify(custom.body));
      return;
    }
    const status = url.searchParams.get('status');
    const matching = status === null ? runs : runs.filter((run) => run.status === status);
    const start = Number(url.searchParams.get('cursor') ?? '0');
    const page = matching.slice(start, start + 2);
    const next = start + 2 < matching.length ? { nextCursor: String(start + 2) } : {};
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ runs: page, ...next }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, seen, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
};

describe('tessera runs', () => {
  let server: Server | undefined;
  afterEach(() => new Promise((resolve) => (server?.listening ? server.close(resolve) : resolve(undefined))));

  it('lists the newest N runs, following the cursor across pages, with the token as a bearer', async () => {
    const api = await fakeApi();
    server = api.server;
    const t = terminal();

    const code = await runsCommand.run(['--api', api.url, '--token', 'jwt-1', '--limit', '3'], t.io);

    expect(code).toBe(0);
    // Pages of two: the first page and one more make three runs; the third page is never asked for.
    expect(t.out.map((line) => line.split('  ')[0])).toEqual([RUNS[0]!.runId, RUNS[1]!.runId, RUNS[2]!.runId]);
    expect(api.seen.map((request) => request.url.searchParams.get('cursor'))).toEqual([null, '2']);
    expect(api.seen.every((request) => request.url.searchParams.get('limit') === '3')).toBe(true);
    expect(api.seen.every((request) => request.authorization === 'Bearer jwt-1')).toBe(true);
  });

  it('asks for one status only, and prints JSON summaries with --json', async () => {
    const running = summary(2, { status: 'running', complete: null, progress: { dispatched: 4, terminal: 1, byState: { ok: 1, running: 3 } } });
    const api = await fakeApi(undefined, [RUNS[0]!, RUNS[1]!, RUNS[2]!, running, RUNS[4]!]);
    server = api.server;
    const t = terminal();

    const code = await runsCommand.run(['--api', api.url, '--token', 't', '--status', 'running', '--json'], t.io);

    expect(code).toBe(0);
    expect(api.seen[0]!.url.searchParams.get('status')).toBe('running');
    expect(JSON.parse(t.out.join('\n'))).toEqual([running]);
  });

  it('says "no runs" when the tenant has none', async () => {
    const api = await fakeApi(() => ({ status: 200, body: { runs: [] } }));
    server = api.server;
    const t = terminal();

    expect(await runsCommand.run(['--api', api.url, '--token', 't'], t.io)).toBe(0);
    expect(t.out).toEqual(['no runs']);
  });

  it("prints the API's refusal and exits 1", async () => {
    const api = await fakeApi(() => ({ status: 401, body: { error: { code: 'Unauthorized', message: 'the token has expired' } } }));
    server = api.server;
    const t = terminal();

    expect(await runsCommand.run(['--api', api.url, '--token', 'old'], t.io)).toBe(1);
    expect(t.out).toEqual([]);
    // The warning that --token shows in the process list, then the refusal.
    expect(t.err).toHaveLength(2);
    expect(t.err[0]).toBe(TOKEN_FLAG_WARNING);
    expect(t.err[1]).toMatch(/^tessera runs: /);
    expect(t.err[1]).toContain('401');
  });

  it.each([
    [['--status', 'done'], `--status must be one of ${RunStatus.options.join(', ')}`],
    [['--limit', '0'], '--limit must be a whole number of at least 1'],
    [['--limit', '2.5'], '--limit must be a whole number of at least 1'],
    [['--api', 'http://127.0.0.1:9'], '--api needs a token: pass --token-file PATH or set TESSERA_TOKEN'],
    [['--colour'], "Unknown option '--colour'"],
  ])('refuses %j before any request, naming the problem', async (args, problem) => {
    const saved = process.env.TESSERA_TOKEN;
    delete process.env.TESSERA_TOKEN;
    try {
      const refusal = await runsCommand.run(args, terminal().io).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(UsageError);
      expect((refusal as UsageError).message).toContain(problem);
    } finally {
      if (saved !== undefined) process.env.TESSERA_TOKEN = saved;
    }
  });
});

describe('runLine', () => {
  it('shows id, status, creation time, ended of dispatched, coverage and the goal', () => {
    const line = runLine(summary(1, { status: 'running', complete: null, progress: { dispatched: 12, terminal: 7, byState: {} } }));
    // Fields joined by two spaces; status padded to 9, the count to 7, the coverage to 10.
    expect(line).toBe(`${summary(1).runId}  running    2026-11-01T10:00:00.000Z     7/12  -           goal 1`);
  });

  it('cuts a goal past 60 characters to 59 and an ellipsis', () => {
    const goal = 'x'.repeat(61);
    const line = runLine(summary(1, { goal, complete: false }));
    expect(line.endsWith(`incomplete  ${'x'.repeat(59)}…`)).toBe(true);
    expect(runLine(summary(1, { goal: 'y'.repeat(60) })).endsWith('y'.repeat(60))).toBe(true);
  });
});
