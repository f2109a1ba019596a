import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRequestInput } from '../../lib/contract';
import { example, target } from './target';

/**
 * The supervisor, scripted and offline: it proposes the "March through June" split of the
 * tax year, reads the problems plan_run names, repairs the field they name, starts the run, waits
 * with progress notifications and reads the answer, over the official SDK's Client. The same
 * script runs over stdio against `tessera mcp` and over Streamable HTTP against the API's /mcp.
 */

const REPOSITORY = join(import.meta.dirname, '..', '..');

type Tenant = 'acme' | 'globex';

const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
});

const connect = async (transport: StdioClientTransport | StreamableHTTPClientTransport): Promise<Client> => {
  const client = new Client({ name: 'scripted-supervisor', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
};

const overHttp = (tenant: Tenant = 'acme'): Promise<Client> =>
  connect(
    new StreamableHTTPClientTransport(new URL(`${target().apiUrl.replace(/\/$/, '')}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${target().tokens[tenant]}` } },
    }),
  );

const overStdio = (): Promise<Client> =>
  connect(
    new StdioClientTransport({
      command: process.execPath,
      // The token as an agent desktop's configuration passes it: in the environment, not on the command line.
      args: [join(REPOSITORY, 'bin', 'tessera.mjs'), 'mcp', '--api', target().apiUrl],
      env: { ...getDefaultEnvironment(), TESSERA_TOKEN: target().tokens.acme },
      cwd: REPOSITORY,
      stderr: 'pipe',
    }),
  );

/** A tool's structured result, with whether it was an error. */
const call = async (client: Client, name: string, args: Record<string, unknown>, onprogress?: (progress: Progress) => void) => {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000, ...(onprogress ? { onprogress } : {}) });
  return { isError: result.isError === true, value: result.structuredContent as Record<string, unknown> };
};

interface Problem {
  readonly code: string;
  readonly path: string;
  readonly from?: string;
  readonly toExclusive?: string;
  readonly fix: string;
}

/** Sets the value at a dotted path (`subtasks.1.scope.from`) of a request. */
const setAt = (request: RunRequestInput, path: string, value: unknown): RunRequestInput => {
  const copy = structuredClone(request) as unknown as Record<string, unknown>;
  const keys = path.split('.');
  const last = keys.pop() as string;
  const parent = keys.reduce<Record<string, unknown>>((node, key) => node[key] as Record<string, unknown>, copy);
  parent[last] = value;
  return copy as unknown as RunRequestInput;
};

const supervise = async (client: Client) => {
  const proposal = example('tax-2025-overlap');
  const first = await call(client, 'plan_run', { request: proposal });
  expect(first.isError).toBe(true);
  const problems = first.value.problems as Problem[];
  // B says "March through June": it starts on 2025-03-01, inside A's January-March.
  expect(problems).toEqual([
    expect.objectContaining({ code: 'assignment_overlap', path: 'subtasks.1.scope.from', from: '2025-03-01', toExclusive: '2025-04-01' }),
  ]);
  expect(problems[0]?.fix).toContain('2025-03-01..2025-04-01');

  // The repair: the overlap ends where B must start (half-open scopes).
  const overlap = problems[0] as Problem;
  const repaired = setAt(proposal, overlap.path, overlap.toExclusive);
  const second = await call(client, 'plan_run', { request: repaired });
  expect(second.isError).toBe(false);
  expect((second.value.subtasks as { id: string; assigned: unknown }[]).map((s) => [s.id, s.assigned])).toEqual([
    ['A', { from: '2025-01-01', toExclusive: '2025-04-01' }],
    ['B', { from: '2025-04-01', toExclusive: '2025-07-01' }],
    ['C', { from: '2025-07-01', toExclusive: '2025-10-01' }],
    ['D', { from: '2025-10-01', toExclusive: '2026-01-01' }],
  ]);

  const started = await call(client, 'start_run', { request: repaired, idempotencyKey: `supervisor-${randomUUID()}` });
  expect(started.isError).toBe(false);
  const runId = started.value.runId as string;

  const progress: Progress[] = [];
  let waited = await call(client, 'wait_for_run', { runId, timeoutSeconds: 60 }, (p) => progress.push(p));
  for (let calls = 1; waited.value.ended !== true && calls < 10; calls += 1) {
    waited = await call(client, 'wait_for_run', { runId, timeoutSeconds: 60 }, (p) => progress.push(p));
  }
  expect(waited.value.ended).toBe(true);
  // Four quarters and the June re-check end: the answer counts 5 of 5 in round 2.
  expect(waited.value.progress).toMatchObject({ ended: 5, dispatched: 5, round: 2 });
  // The notifications rise and never pass their total. The last one sent may not reach the
  // handler: the SDK's Client runs notification handlers a microtask late, and a response read
  // in the same chunk has already removed the request's progress handler by then.
  expect(progress.length).toBeGreaterThan(0);
  for (const p of progress) expect(p.progress).toBeLessThanOrEqual(p.total ?? Number.POSITIVE_INFINITY);
  for (const [i, p] of progress.entries()) if (i > 0) expect(p.progress).toBeGreaterThanOrEqual(progress[i - 1]?.progress ?? 0);

  const read = await call(client, 'get_run', { runId });
  expect(read.value).toMatchObject({
    runId,
    status: 'succeeded',
    coverage: {
      complete: true,
      missingQuestions: [],
      // B's statement closed on 27 June: 28-30 June was re-checked against the transaction feed and is empty.
      gaps: [
        {
          from: '2025-06-28',
          toExclusive: '2025-07-01',
          kind: 'observed',
          status: 'confirmed_empty',
          settled: true,
          recheckedAgainst: 'transaction-feed',
          records: 0,
        },
      ],
    },
    answer: { result: { totalDeductiblePence: 113747 } },
  });
  expect((read.value.answer as { text: string }).text).toContain('£1,137.47');
  return runId;
};

describe('agents call tessera over MCP', () => {
  it('over stdio (tessera mcp): the supervisor repairs the March overlap and reads £1,137.47 with the June gap re-checked', async () => {
    const client = await overStdio();
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['plan_run', 'start_run', 'get_run', 'wait_for_run', 'cancel_run', 'list_runs']);
    await supervise(client);
  }, 180_000);

  it('over stdio, as an MCP task: start_run returns the run as a task, tasks/get follows it, tasks/result reads £1,137.47', async () => {
    const client = await overStdio();
    const request = example('tax-2025');
    const seen: string[] = [];
    let taskId: string | undefined;
    let result: Record<string, unknown> | undefined;
    const stream = client.experimental.tasks.callToolStream(
      { name: 'start_run', arguments: { request, idempotencyKey: `task-${randomUUID()}` } },
      CallToolResultSchema,
      { task: {}, timeout: 120_000 },
    );
    for await (const message of stream) {
      if (message.type === 'taskCreated') taskId = message.task.taskId;
      if (message.type === 'taskStatus') seen.push(message.task.status);
      if (message.type === 'result') result = message.result.structuredContent;
      if (message.type === 'error') throw message.error;
    }
    // The task is the run: its id is the run id, and the run resource says the same.
    expect(result).toMatchObject({ ended: true, runId: taskId, status: 'succeeded', coverage: { complete: true } });
    expect((result?.answer as { text: string }).text).toContain('£1,137.47');
    expect(seen.at(-1)).toBe('completed');
    // Before that, only working: the run is never reported ended before its answer is written.
    expect(seen.slice(0, -1).every((status) => status === 'working')).toBe(true);
    expect((await call(client, 'get_run', { runId: taskId })).value).toMatchObject({ runId: taskId, status: 'succeeded' });
  }, 180_000);

  it("over Streamable HTTP (/mcp): the same supervisor, and another tenant's run id is not found", async () => {
    const runId = await supervise(await overHttp('acme'));

    const asGlobex = await overHttp('globex');
    const foreign = await call(asGlobex, 'get_run', { runId });
    const missing = await call(asGlobex, 'get_run', { runId: 'no-such-run' });
    expect(foreign).toEqual({ isError: true, value: { ok: false, code: 'not_found', message: `not found: no run ${runId} for this caller` } });
    expect(missing).toEqual({ isError: true, value: { ok: false, code: 'not_found', message: 'not found: no run no-such-run for this caller' } });
    expect((await call(asGlobex, 'wait_for_run', { runId, timeoutSeconds: 1 })).value.code).toBe('not_found');
    await expect(asGlobex.readResource({ uri: `tessera://runs/${runId}` })).rejects.toThrow(/not found/);
    // The owner reads it as a resource too.
    const resource = await (await overHttp('acme')).readResource({ uri: `tessera://runs/${runId}` });
    expect(JSON.parse((resource.contents[0] as { text: string }).text)).toMatchObject({ runId, coverage: { complete: true } });
  }, 180_000);
});
