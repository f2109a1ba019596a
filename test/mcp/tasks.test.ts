import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CallToolResultSchema, CreateTaskResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { registry } from '../../examples/app/workers';
import { planRequest } from '../../lib/application/plan-request';
import { createTesseraClient } from '../../lib/client';
import { RunResource, type RunSummary } from '../../lib/contract';
import { DEFAULT_MAX_DEADLINE_SECONDS } from '../../lib/domain';
import { createTesseraMcpServer } from '../../lib/mcp/server';
import { runTaskState, TASK_POLL_INTERVAL_MS } from '../../lib/mcp/tasks';
import { taxRun } from '../web/fixtures';

const plan = planRequest({ catalog: registry.catalog(), maxDeadlineSeconds: DEFAULT_MAX_DEADLINE_SECONDS });

/**
 * A fake tessera API over `fetch`: runs kept per bearer token (the tenant), the four routes the
 * task store reads, and a hand to end a run. It is not AWS: it stands for the HTTP API the MCP
 * server is a client of, so the test sees every request the task methods make.
 */
const fakeApi = () => {
  const tenants = new Map<string, Map<string, RunResource>>();
  const requests: string[] = [];
  let created = 0;
  const runsOf = (token: string) => tenants.get(token) ?? tenants.set(token, new Map()).get(token)!;
  const notFound = () => Response.json({ error: { code: 'RunNotFound', message: 'no such run' } }, { status: 404 });
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(String(input));
    const method = init?.method ?? 'GET';
    const token = new Headers(init?.headers).get('authorization')?.replace(/^Bearer /, '') ?? '';
    const runs = runsOf(token);
    requests.push(`${method} ${url.pathname}${url.search}`);
    const [, , id, action] = url.pathname.split('/').map(decodeURIComponent);
    if (method === 'POST' && url.pathname === '/runs') {
      created += 1;
      const runId = `run-${created}`;
      const tax = taxRun();
      runs.set(runId, { ...tax, runId, status: 'running', answer: null, progress: { dispatched: 4, terminal: 1, byState: { ok: 1, running: 3 } } });
      return Response.json({ runId, status: 'running', location: `/runs/${runId}`, warnings: [] }, { status: 202 });
    }
    if (method === 'GET' && url.pathname === '/runs') {
      const rows: RunSummary[] = [...runs.values()].map((run) => ({
        runId: run.runId,
        status: run.status,
        goal: run.goal,
        createdAt: run.createdAt,
        updatedAt: run.updatedAt,
        progress: run.progress,
        complete: run.answer?.coverage.complete ?? null,
      }));
      return Response.json({ runs: rows });
    }
    const run = id === undefined ? undefined : runs.get(id);
    if (run === undefined) return notFound();
    if (method === 'GET' && action === undefined) return Response.json({ ...run, subtasks: [] });
    if (method === 'POST' && action === 'cancel') {
      const cancelled = { ...run, status: 'cancelled' as const };
      runs.set(run.runId, cancelled);
      return Response.json(cancelled);
    }
    return notFound();
  };
  /** Ends a run as the state machine would: its status, then its answer. */
  const end = (token: string, runId: string, status: 'succeeded' | 'failed' | 'cancelled', answered = true) => {
    const run = runsOf(token).get(runId) as RunResource;
    const tax = taxRun();
    const answer = answered ? (status === 'succeeded' ? tax.answer : { ...tax.answer!, coverage: { ...tax.answer!.coverage, complete: false } }) : null;
    runsOf(token).set(runId, RunResource.parse({ ...run, status, answer, progress: tax.progress, updatedAt: '2026-11-30T12:00:30.000Z' }));
  };
  return { fetch, end, requests };
};

const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
});

const connected = async (api: ReturnType<typeof fakeApi>, token = 'acme'): Promise<Client> => {
  const client = createTesseraClient({ apiUrl: 'http://tessera.test', token, fetch: api.fetch, readRetryDelaysMs: [] });
  const server = createTesseraMcpServer({ client, plan, answerPollMs: 5, maxWaitSeconds: 2 });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const mcp = new Client({ name: 'test', version: '1.0.0' });
  await mcp.connect(clientSide);
  clients.push(mcp);
  return mcp;
};

const START = { name: 'start_run', arguments: { request: taxRequest(), idempotencyKey: 'tasks-1' } };

function taxRequest(): unknown {
  return JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'examples', 'tax-2025.json'), 'utf8'));
}

/** A task-augmented tools/call, answered with the task (CreateTaskResult). */
const asTask = (client: Client, params: { name: string; arguments: Record<string, unknown> }) =>
  client.request({ method: 'tools/call', params: { ...params, task: { ttl: 60_000 } } }, CreateTaskResultSchema);

describe('a run as an MCP task: the status mapping', () => {
  it('is working while the run runs or its answer is being written, then completed, failed or cancelled', () => {
    expect(runTaskState('running', false).status).toBe('working');
    expect(runTaskState('succeeded', false).status).toBe('working');
    expect(runTaskState('failed', false).status).toBe('working');
    expect(runTaskState('succeeded', true).status).toBe('completed');
    expect(runTaskState('failed', true).status).toBe('failed');
    // tasks/cancel must answer cancelled at once, before the partial answer is written.
    expect(runTaskState('cancelled', false).status).toBe('cancelled');
    expect(runTaskState('cancelled', true).status).toBe('cancelled');
  });
});

describe('a run as an MCP task, over the SDK Client', () => {
  it('advertises tasks for tools/call, list and cancel, and marks start_run and wait_for_run as optional tasks', async () => {
    const client = await connected(fakeApi());
    expect(client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const support = Object.fromEntries((await client.listTools()).tools.map((tool) => [tool.name, tool.execution?.taskSupport]));
    expect(support).toEqual({
      plan_run: undefined,
      start_run: 'optional',
      get_run: undefined,
      wait_for_run: 'optional',
      cancel_run: undefined,
      list_runs: undefined,
    });
  });

  it('start_run as a task: the task id is the run id, its status the run status, its result the run summary', async () => {
    const api = fakeApi();
    const client = await connected(api);
    const { task } = await asTask(client, START);
    expect(task).toEqual({
      taskId: 'run-1',
      status: 'working',
      statusMessage: 'running: call tasks/get again after pollInterval',
      ttl: null,
      createdAt: '2026-11-30T12:00:00.000Z',
      lastUpdatedAt: '2026-11-30T12:00:09.000Z',
      pollInterval: TASK_POLL_INTERVAL_MS,
    });
    // The run ends; until the answer is written the task is still working.
    api.end('acme', 'run-1', 'succeeded', false);
    expect((await client.experimental.tasks.getTask('run-1')).status).toBe('working');
    api.end('acme', 'run-1', 'succeeded');
    expect(await client.experimental.tasks.getTask('run-1')).toMatchObject({ status: 'completed', lastUpdatedAt: '2026-11-30T12:00:30.000Z' });
    const result = await client.experimental.tasks.getTaskResult('run-1', CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({
      ended: true,
      runId: 'run-1',
      status: 'succeeded',
      coverage: { complete: true, gaps: [{ status: 'confirmed_empty', settled: true }] },
      answer: { text: 'Deductible total: £1,137.47.' },
    });
    expect(result._meta).toEqual({ 'io.modelcontextprotocol/related-task': { taskId: 'run-1' } });
    // Every read of the run asks for no subtasks: a 1,000-subtask run stays a small read.
    expect(api.requests.filter((r) => r.startsWith('GET /runs/')).every((r) => r.endsWith('?subtasks=none'))).toBe(true);
  });

  it('wait_for_run as a task names an existing run; tasks/cancel cancels the run; a failed run is a failed task with its coverage', async () => {
    const api = fakeApi();
    const client = await connected(api);
    await client.callTool(START);
    await client.callTool({ ...START, arguments: { ...START.arguments, idempotencyKey: 'tasks-2' } });
    expect((await asTask(client, { name: 'wait_for_run', arguments: { runId: 'run-1' } })).task.taskId).toBe('run-1');
    const cancelled = await client.experimental.tasks.cancelTask('run-1');
    expect(cancelled).toMatchObject({ taskId: 'run-1', status: 'cancelled' });
    expect(api.requests).toContain('POST /runs/run-1/cancel');
    // The partial answer is written after the cancel; tasks/result waits for it within its bound.
    setTimeout(() => api.end('acme', 'run-1', 'cancelled'), 50);
    const result = await client.experimental.tasks.getTaskResult('run-1', CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({ ended: true, status: 'cancelled', coverage: { complete: false } });
    // A terminal task cannot be cancelled again (the SDK refuses before any API call).
    await expect(client.experimental.tasks.cancelTask('run-1')).rejects.toThrow(/terminal status: cancelled/);
    api.end('acme', 'run-2', 'failed');
    expect((await client.experimental.tasks.getTask('run-2')).status).toBe('failed');
    const failed = await client.experimental.tasks.getTaskResult('run-2', CallToolResultSchema);
    expect(failed.structuredContent).toMatchObject({ status: 'failed', coverage: { complete: false } });
    const listed = await client.experimental.tasks.listTasks();
    expect(listed.tasks.map((task) => [task.taskId, task.status])).toEqual([
      ['run-1', 'cancelled'],
      ['run-2', 'failed'],
    ]);
  });

  it("another tenant's run is no task of this caller: not found for get, result and cancel", async () => {
    const api = fakeApi();
    await asTask(await connected(api, 'acme'), START);
    const globex = await connected(api, 'globex');
    await expect(globex.experimental.tasks.getTask('run-1')).rejects.toThrow(/Task not found/);
    await expect(globex.experimental.tasks.getTaskResult('run-1', CallToolResultSchema)).rejects.toThrow(/Task not found/);
    await expect(globex.experimental.tasks.cancelTask('run-1')).rejects.toThrow(/Task not found/);
    await expect(asTask(globex, { name: 'wait_for_run', arguments: { runId: 'run-1' } })).rejects.toThrow(/not found: no run run-1 for this caller/);
    expect(api.requests).not.toContain('POST /runs/run-1/cancel');
    expect((await globex.experimental.tasks.listTasks()).tasks).toEqual([]);
  });

  it('refuses a task of a tool that is not one, and bad arguments with their field, as JSON-RPC errors', async () => {
    const client = await connected(fakeApi());
    const error = await asTask(client, { name: 'get_run', arguments: { runId: 'run-1' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({ code: -32601, message: expect.stringMatching(/get_run does not run as a task/) });
    const bad = await asTask(client, { name: 'wait_for_run', arguments: { runId: '' } }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ code: -32602, data: { code: 'invalid_arguments', problems: [{ path: 'runId' }] } });
  });

  it('a client that asks for no task is answered as before: start_run returns the run id', async () => {
    const result = await (await connected(fakeApi())).callTool(START);
    expect(result.structuredContent).toMatchObject({ ok: true, runId: 'run-1', status: 'running' });
    expect(result).not.toHaveProperty('task');
  });

  it("the SDK's own task stream polls at the stated interval and yields the summary", async () => {
    const api = fakeApi();
    const client = await connected(api);
    const seen: string[] = [];
    const ending = setTimeout(() => api.end('acme', 'run-1', 'succeeded'), TASK_POLL_INTERVAL_MS / 2);
    let summary: unknown;
    for await (const message of client.experimental.tasks.callToolStream(START, CallToolResultSchema, { task: {} })) {
      seen.push(message.type === 'taskStatus' ? `status ${message.task.status}` : message.type);
      if (message.type === 'result') summary = message.result.structuredContent;
    }
    clearTimeout(ending);
    expect(seen).toEqual(['taskCreated', 'status working', 'status completed', 'result']);
    expect(summary).toMatchObject({ runId: 'run-1', coverage: { complete: true } });
  }, 10_000);
});
