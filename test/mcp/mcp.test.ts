import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { registry } from '../../examples/app/workers';
import { planRequest } from '../../lib/application/plan-request';
import { createTesseraClient } from '../../lib/client';
import { RunRequest, RunResource, type RunRequestInput } from '../../lib/contract';
import { DEFAULT_MAX_DEADLINE_SECONDS } from '../../lib/domain';
import { matchRoute } from '../../lib/http/in-process';
import { webRequest } from '../../lib/http/mcp-route';
import { createTesseraMcpServer } from '../../lib/mcp/server';
import { compactRun, jsonBytes } from '../../lib/mcp/summary';
import { GET_RUN_MAX_BYTES, toolDefinitions } from '../../lib/mcp/tools';

const plan = planRequest({ catalog: registry.catalog(), maxDeadlineSeconds: DEFAULT_MAX_DEADLINE_SECONDS });
const example = (name: string): RunRequestInput =>
  JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'examples', `${name}.json`), 'utf8')) as RunRequestInput;

const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
});

/** An MCP client of the server in memory; its API client points nowhere, so only plan_run and listing may be called. */
const connected = async (): Promise<Client> => {
  const server = createTesseraMcpServer({ client: createTesseraClient({ apiUrl: 'http://127.0.0.1:9', token: 't', readRetryDelaysMs: [] }), plan });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(clientSide);
  clients.push(client);
  return client;
};

describe('the MCP tools', () => {
  it('list exactly the function-calling definitions: same names, descriptions and JSON Schemas', async () => {
    const listed = (await (await connected()).listTools()).tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
    }));
    expect(listed).toEqual(toolDefinitions());
    expect(listed.map((tool) => tool.name)).toEqual(['plan_run', 'start_run', 'get_run', 'wait_for_run', 'cancel_run', 'list_runs']);
    // The request argument is the contract's RunRequest, as JSON Schema generates it for input.
    const request = (toolDefinitions()[0]?.inputSchema as { properties: { request: unknown } }).properties.request;
    const { $schema: _, ...contract } = z.toJSONSchema(RunRequest, { io: 'input' });
    expect(request).toEqual({ ...contract, description: 'The run request to check: the body start_run would send. Nothing is written.' });
  });

  it('teach the contract in their descriptions: half-open scopes, justification, follow-up, complete: false', () => {
    const text = Object.fromEntries(toolDefinitions().map((tool) => [tool.name, tool.description]));
    expect(text.plan_run).toMatch(/half-open/);
    expect(text.plan_run).toMatch(/required: true.*needs a `justification`/);
    expect(text.get_run).toMatch(/follow it up/);
    expect(text.get_run).toMatch(/complete: false` means the answer is partial/);
    expect(text.wait_for_run).toMatch(/complete: false` means the answer is partial/);
  });

  it('plan_run answers the March overlap with its path and a fix, and writes nothing (the API is never reached)', async () => {
    const result = await (await connected()).callTool({ name: 'plan_run', arguments: { request: example('tax-2025-overlap') } });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({
      ok: false,
      code: 'invalid_run_request',
      message: 'the request has 1 problem(s); fix them and call plan_run again',
      problems: [
        {
          code: 'assignment_overlap',
          path: 'subtasks.1.scope.from',
          message: 'subtasks A and B both cover 2025-03-01..2025-04-01',
          subtaskIds: ['A', 'B'],
          from: '2025-03-01',
          toExclusive: '2025-04-01',
          fix: "give 2025-03-01..2025-04-01 to one subtask only: A and B both cover it; end the earlier one's toExclusive where the later one's from starts",
        },
      ],
    });
  });

  it('plan_run answers a malformed request with field-precise problems rather than a protocol error', async () => {
    const tax = example('tax-2025');
    const request = { ...tax, subtasks: tax.subtasks?.map((s, i) => (i === 2 ? { ...s, justification: undefined } : s)) };
    const result = await (await connected()).callTool({ name: 'plan_run', arguments: { request } });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({
      problems: [
        { code: 'invalid_request', path: 'subtasks.2.justification', fix: 'give `subtasks.2.justification` a value its schema allows (see the message)' },
      ],
    });
  });

  it('plan_run answers the repaired split with the four quarters', async () => {
    const result = await (await connected()).callTool({ name: 'plan_run', arguments: { request: example('tax-2025') } });
    expect(result.isError).toBeUndefined();
    expect((result.structuredContent as { subtasks: { id: string }[] }).subtasks.map((s) => s.id)).toEqual(['A', 'B', 'C', 'D']);
  });

  it('refuses arguments that break a tool schema, naming the field', async () => {
    const result = await (await connected()).callTool({ name: 'get_run', arguments: { runId: 'r', limit: 500 } });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ code: 'invalid_arguments', problems: [{ path: 'limit', code: 'invalid_request' }] });
  });
});

/**
 * The worst 1,000-subtask run for a summary: an ids universe of 10,000 long ids in 1,000 chunks,
 * every chunk timed out (1,000 unread gaps of 10 ids each, 1,000 degraded reasons, 1,000
 * problems), a long answer text and a large result.
 */
const thousandSubtaskRun = (): RunResource => {
  const id = (n: number) => `customer-${String(n).padStart(8, '0')}-${'x'.repeat(24)}`;
  const chunk = (c: number) => Array.from({ length: 10 }, (_, i) => id(c * 10 + i));
  const subtasks = Array.from({ length: 1000 }, (_, c) => ({
    id: `chunk-${c + 1}`,
    worker: 'crm-lookup',
    round: 1,
    questionIds: ['q1'],
    required: true,
    justification: 'every customer counts',
    assigned: { ids: chunk(c) },
    deadline: '2025-06-01T12:01:00.000Z',
    deadlineSeconds: 60,
    state: 'timed_out',
    observed: null,
    sources: [],
    sourcesReached: 0,
    usage: { modelCalls: 2, estimatedCost: 14 },
    reason: 'deadline passed before the worker reported',
    refusals: [],
  }));
  return RunResource.parse({
    runId: 'r-1000',
    status: 'failed',
    goal: 'Look up every customer',
    createdAt: '2025-06-01T12:00:00.000Z',
    updatedAt: '2025-06-01T12:05:00.000Z',
    universe: { dimension: 'ids', ids: Array.from({ length: 10_000 }, (_, n) => id(n)) },
    round: 1,
    progress: { dispatched: 1000, terminal: 1000, byState: { timed_out: 1000 } },
    budget: { modelCalls: 4000, costLimit: 100_000 },
    usage: { modelCalls: 2000, estimatedCost: 14_000 },
    subtasks,
    answer: {
      text: 'Nothing was read. '.repeat(600),
      result: { customers: Array.from({ length: 500 }, (_, n) => ({ id: id(n), balance: n })) },
      coverage: {
        complete: false,
        missingQuestions: ['q1'],
        degradedReason: subtasks.map((s) => `${s.id}:timed_out`),
        partitions: 1000,
        overlaps: [],
        gaps: subtasks.map((s) => ({ ids: s.assigned.ids, kind: 'unread', subtaskId: s.id, reason: 'timed_out', status: 'unchecked' })),
        problems: subtasks.map((s) => ({ code: 'missing_outcome', message: `${s.id} reported nothing`, subtaskIds: [s.id] })),
        statement: 'Coverage: none of 10,000 ids; 1,000 gaps unread (timed out).',
      },
    },
    error: { code: 'RequiredGapError', message: 'required subtasks did not end ok' },
  });
};

describe('get_run summary size', () => {
  it(`fits a 1,000-subtask run in ${GET_RUN_MAX_BYTES} bytes, coverage first, with what it cut counted`, () => {
    const run = thousandSubtaskRun();
    const summary = compactRun(run);
    const bytes = jsonBytes(summary);
    console.log(`get_run of a 1,000-subtask run: ${bytes} bytes (the run resource: ${jsonBytes(run)} bytes; bound ${GET_RUN_MAX_BYTES})`);
    expect(bytes).toBeLessThanOrEqual(GET_RUN_MAX_BYTES);
    expect(Object.keys(summary).slice(0, 3)).toEqual(['runId', 'status', 'coverage']);
    // Every gap is accounted for: listed or counted.
    expect((summary.coverage?.gaps.length ?? 0) + (summary.coverage?.gapsOmitted ?? 0)).toBe(1000);
    expect(summary.coverage?.gaps[0]).toMatchObject({ kind: 'unread', status: 'unchecked', settled: false, subtaskId: 'chunk-1', count: 10 });
    expect(summary.coverage?.complete).toBe(false);
    expect(summary.next).toMatch(/partial/);
  });

  it('keeps a small run whole: every gap, the whole text and the result', () => {
    const run = thousandSubtaskRun();
    const small = RunResource.parse({
      ...run,
      subtasks: run.subtasks.slice(0, 2),
      answer: { ...run.answer, text: 'Two gaps.', result: { n: 2 }, coverage: { ...run.answer?.coverage, gaps: run.answer?.coverage.gaps.slice(0, 2) } },
    });
    const summary = compactRun(small);
    expect(summary.coverage?.gaps).toHaveLength(2);
    expect(summary.coverage?.gapsOmitted).toBeUndefined();
    expect(summary.answer).toEqual({ text: 'Two gaps.', result: { n: 2 } });
  });
});

describe('the in-process route selection of /mcp', () => {
  it('matches the run routes as API Gateway does, and never the MCP route', () => {
    expect(matchRoute('GET', '/runs/r%2F1/subtasks')).toEqual({ routeKey: 'GET /runs/{runId}/subtasks', pathParameters: { runId: 'r/1' } });
    expect(matchRoute('POST', '/runs')).toEqual({ routeKey: 'POST /runs', pathParameters: {} });
    expect(matchRoute('POST', '/runs/r-1/cancel')).toEqual({ routeKey: 'POST /runs/{runId}/cancel', pathParameters: { runId: 'r-1' } });
    expect(matchRoute('POST', '/mcp')).toBeUndefined();
    expect(matchRoute('DELETE', '/runs/r-1')).toBeUndefined();
    expect(matchRoute('GET', '/runs/')).toBeUndefined();
  });
});

describe('the /mcp route on API Gateway events', () => {
  it("reads an emulator's domain name ending in a number (a WHATWG URL refuses it as IPv4) as well as AWS's", async () => {
    const event = (domainName: string) =>
      ({
        rawPath: '/mcp',
        rawQueryString: '',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        requestContext: { domainName, http: { method: 'POST' } },
      }) as unknown as Parameters<typeof webRequest>[0]['event'];
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    expect(() => new URL('https://2d2912d8.execute-api.127.0.0.1/mcp')).toThrow(TypeError);
    for (const domainName of ['2d2912d8.execute-api.127.0.0.1', 'abc123.execute-api.eu-west-1.amazonaws.com']) {
      const request = webRequest({ event: event(domainName), body });
      expect(new URL(request.url).pathname).toBe('/mcp');
      expect(request.method).toBe('POST');
      expect(await request.text()).toBe(body);
    }
  });
});
