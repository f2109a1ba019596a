import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type CreateTaskResult,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { MAX_WAIT_SECONDS, type RunResource } from '../contract';
import { TesseraApiError, type TesseraClient } from '../client';
import type { ValidationResult } from '../domain';
import { withFix, type ReportedProblem } from './fixes';
import { runTaskStore, TASK_POLL_INTERVAL_MS, TASK_TOOLS } from './tasks';
import { compactRun, compactRunRow, compactSubtask, type CompactRun } from './summary';
import { inputJsonSchema, TESSERA_TOOLS, WAIT_SECONDS, type TesseraToolName, type ToolArguments } from './tools';

/** What the MCP server is built from. */
export interface TesseraMcpOptions {
  /** The tessera HTTP API, as the caller's tenant: its token decides whose runs the tools see. */
  readonly client: TesseraClient;
  /**
   * Validates and plans a request without writing anything: the same validation `POST /runs`
   * runs (`validateRunRequest` over the deployment's catalog, horizon and capacity).
   */
  readonly plan: (request: unknown) => ValidationResult;
  /**
   * The longest one `wait_for_run` call may wait here, whatever it asks for: a Lambda behind API
   * Gateway must answer within 30 s.
   * @default WAIT_SECONDS.max
   */
  readonly maxWaitSeconds?: number;
  /** Pause between reads while an ended run's answer is being written. @default 250 */
  readonly answerPollMs?: number;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;
/** What a wait needs of a request: its progress token, how to notify, and whether it was cancelled. */
type WaitExtra = Pick<Extra, '_meta' | 'sendNotification' | 'signal'>;

/** The server's name and version, as `initialize` answers them. */
export const TESSERA_MCP_SERVER = { name: 'tessera', version: '0.1.0' } as const;

/** The URI template of a run's resource: its compact summary, as `get_run` answers it. */
export const RUN_RESOURCE_TEMPLATE = 'tessera://runs/{runId}';

const INSTRUCTIONS = [
  'tessera runs a job split into subtasks whose scopes must tile a universe (half-open: from included, toExclusive excluded),',
  'and answers with a coverage statement that says what was actually read. Check a split with plan_run and repair it until',
  'ok: true, start it with start_run, wait with wait_for_run, and read coverage before the answer:',
  'complete: false means the answer is partial.',
].join(' ');

const json = (value: unknown, isError = false): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(value) }],
  structuredContent: value as Record<string, unknown>,
  ...(isError ? { isError: true } : {}),
});

/** A refused call as the model reads it: a code, words, and the problems with their fixes. */
const refused = (code: string, message: string, problems: readonly ReportedProblem[] = []): CallToolResult =>
  json({ ok: false, code, message, ...(problems.length > 0 ? { problems: problems.map(withFix) } : {}) }, true);

/** An API error as a tool result; another tenant's run is "not found", exactly as a missing one. */
const apiRefusal = (error: unknown, runId?: string): CallToolResult => {
  if (!(error instanceof TesseraApiError)) throw error;
  if (error.status === 404 && runId !== undefined) return refused('not_found', `not found: no run ${runId} for this caller`);
  const body = error.body && 'error' in error.body ? error.body.error : undefined;
  return refused(body?.code ?? `http_${error.status}`, body?.message ?? error.message, error.issues);
};

/** Arguments that break a tool's schema, with the path of each problem. */
const argumentsRefusal = (name: string, error: z.ZodError): CallToolResult => {
  const problems = error.issues.map((issue) => ({ code: 'invalid_request', path: issue.path.map(String).join('.'), message: issue.message }));
  return refused('invalid_arguments', `the arguments of ${name} have ${problems.length} problem(s)`, problems);
};

/** A refusal as a JSON-RPC error, for a request that must answer with something else (a task): same words, same problems. */
const refusalError = (result: CallToolResult): McpError => {
  const refusal = result.structuredContent as { message?: unknown } | undefined;
  return new McpError(ErrorCode.InvalidParams, typeof refusal?.message === 'string' ? refusal.message : 'refused', refusal);
};

/** A task request's arguments, parsed, or the error their refusal is. */
const argumentsOf = <Input extends z.ZodObject>(tool: { readonly name: string; readonly input: Input }, raw: unknown): z.output<Input> => {
  const parsed = tool.input.safeParse(raw);
  if (!parsed.success) throw refusalError(argumentsRefusal(tool.name, parsed.error));
  return parsed.data;
};

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const progressLine = (run: RunResource): string => {
  const states = Object.entries(run.progress.byState)
    .map(([state, count]) => `${state} ${count}`)
    .join(', ');
  return `round ${run.round} · ${run.progress.terminal}/${run.progress.dispatched} subtasks ended · ${states || 'none dispatched yet'}`;
};

/**
 * The MCP server of tessera: the tools of {@link TESSERA_TOOLS} and a resource per run, over the
 * tessera HTTP API. Transport-free: `tessera mcp` connects it to stdio, the API's `/mcp` route
 * to a stateless Streamable HTTP transport, one server per request.
 *
 * @example
 * const server = createTesseraMcpServer({ client: createTesseraClient({ apiUrl, token }), plan });
 * await server.connect(new StdioServerTransport());
 */
export const createTesseraMcpServer = (options: TesseraMcpOptions): McpServer => {
  const { client } = options;
  const maxWait = Math.min(options.maxWaitSeconds ?? WAIT_SECONDS.max, WAIT_SECONDS.max);
  const readSummary = async (runId: string): Promise<CompactRun> => {
    // Without an ETag to match, the API always answers with the run.
    const read = await client.getRun(runId, { subtasks: 'none' });
    if (!read.modified) throw new McpError(ErrorCode.InternalError, `GET /runs/${runId} answered "not modified" to an unconditional read`);
    return compactRun(read.run);
  };

  const waitFor = async (args: ToolArguments<'wait_for_run'>, extra: WaitExtra): Promise<CallToolResult> => {
    const bound = Math.min(args.timeoutSeconds, maxWait);
    const started = Date.now();
    const token = extra._meta?.progressToken;
    let run: RunResource | undefined;
    let etag: string | undefined;
    let reported = -1;
    for (;;) {
      const leftSeconds = bound - (Date.now() - started) / 1000;
      const waitSeconds = Math.max(1, Math.min(MAX_WAIT_SECONDS, Math.floor(leftSeconds)));
      const ended = run !== undefined && run.status !== 'running';
      // An ended run's answer is written without a change the long-poll would see: read it plainly.
      const read = await client.getRun(args.runId, { subtasks: 'none', ...(etag === undefined || ended ? {} : { ifNoneMatch: etag, waitSeconds }) });
      if (read.modified) run = read.run;
      etag = read.etag;
      const current = run as RunResource;
      // Progress must only increase (MCP): report when another subtask has ended.
      if (token !== undefined && current.progress.terminal > reported) {
        reported = current.progress.terminal;
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress: current.progress.terminal, total: current.progress.dispatched, message: progressLine(current) },
        });
      }
      const waited = Math.round((Date.now() - started) / 1000);
      if (current.status !== 'running' && current.answer !== null) return json({ ended: true, waitedSeconds: waited, ...compactRun(current) });
      if ((Date.now() - started) / 1000 >= bound || extra.signal.aborted) return json({ ended: false, waitedSeconds: waited, ...compactRun(current) });
      if (current.status !== 'running') await pause(options.answerPollMs ?? 250);
    }
  };

  // tasks/result of a run: wait_for_run's result, as long as one call may wait (without progress:
  // a task's result is read after tasks/get says it has ended, or a cancelled run's answer is due).
  const taskResult = async (runId: string): Promise<CallToolResult> => {
    try {
      return await waitFor({ runId, timeoutSeconds: maxWait }, { sendNotification: async () => {}, signal: new AbortController().signal });
    } catch (error) {
      return apiRefusal(error, runId);
    }
  };
  const server = new McpServer(TESSERA_MCP_SERVER, {
    capabilities: { tools: {}, logging: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
    instructions: INSTRUCTIONS,
    taskStore: runTaskStore(client, taskResult),
    defaultTaskPollInterval: TASK_POLL_INTERVAL_MS,
  });

  const handlers: { readonly [Name in TesseraToolName]: (args: ToolArguments<Name>, extra: Extra) => Promise<CallToolResult> } = {
    plan_run: async (args) => {
      const result = options.plan(args.request);
      if (!result.ok)
        return refused('invalid_run_request', `the request has ${result.problems.length} problem(s); fix them and call plan_run again`, result.problems);
      return json({
        ok: true,
        subtasks: result.subtasks.map((s) => ({ id: s.id, worker: s.worker, required: s.required, assigned: s.assigned })),
        warnings: result.warnings,
      });
    },
    start_run: async (args) => {
      try {
        const accepted = await client.createRun(args.request, { idempotencyKey: args.idempotencyKey });
        return json({ ok: true, runId: accepted.runId, status: accepted.status, warnings: accepted.warnings, next: 'call wait_for_run with this runId' });
      } catch (error) {
        return apiRefusal(error);
      }
    },
    get_run: async (args) => {
      try {
        const summary = await readSummary(args.runId);
        if (!args.subtasks) return json(summary);
        const page = await client.listSubtasks(args.runId, { limit: args.limit, ...(args.cursor === undefined ? {} : { cursor: args.cursor }) });
        const rows = { rows: page.subtasks.map(compactSubtask), ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }) };
        return json({ ...summary, subtasks: rows });
      } catch (error) {
        return apiRefusal(error, args.runId);
      }
    },
    wait_for_run: async (args, extra) => {
      try {
        return await waitFor(args, extra);
      } catch (error) {
        return apiRefusal(error, args.runId);
      }
    },
    cancel_run: async (args) => {
      try {
        return json(compactRun(await client.cancelRun(args.runId)));
      } catch (error) {
        return apiRefusal(error, args.runId);
      }
    },
    list_runs: async (args) => {
      try {
        const page = await client.listRuns({
          limit: args.limit,
          ...(args.status ? { status: args.status } : {}),
          ...(args.cursor ? { cursor: args.cursor } : {}),
        });
        return json({ runs: page.runs.map(compactRunRow), ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }) });
      } catch (error) {
        return apiRefusal(error);
      }
    },
  };

  /**
   * A task-augmented call of start_run or wait_for_run: the run it starts or names becomes the
   * task (its id is the run id). A refusal is a JSON-RPC error carrying the same problems as the
   * plain call's result, since a task request answers with a task or an error.
   */
  const createTask = async (name: TesseraToolName, raw: unknown, extra: Extra): Promise<CreateTaskResult> => {
    if (extra.taskStore === undefined) throw new McpError(ErrorCode.InternalError, 'no task store');
    const runId = async (): Promise<string> => {
      switch (name) {
        case 'start_run': {
          const args = argumentsOf(TESSERA_TOOLS.start_run, raw);
          try {
            return (await client.createRun(args.request, { idempotencyKey: args.idempotencyKey })).runId;
          } catch (error) {
            throw refusalError(apiRefusal(error));
          }
        }
        case 'wait_for_run':
          return argumentsOf(TESSERA_TOOLS.wait_for_run, raw).runId;
        case 'plan_run':
        case 'get_run':
        case 'cancel_run':
        case 'list_runs':
          throw new McpError(ErrorCode.MethodNotFound, `${name} does not run as a task: call it without \`task\``);
        default: {
          const unknown: never = name;
          throw new McpError(ErrorCode.MethodNotFound, `no tool ${String(unknown)}`);
        }
      }
    };
    return { task: await extra.taskStore.createTask({ pollInterval: TASK_POLL_INTERVAL_MS, context: { runId: await runId() } }) };
  };

  // The tools are listed and parsed here rather than through `registerTool`, so that their JSON
  // Schema is exactly `toolDefinitions()`'s, and plan_run can answer a malformed request with its
  // problems instead of a protocol error.
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: Object.values(TESSERA_TOOLS).map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: inputJsonSchema(tool) as { type: 'object' },
      annotations: { readOnlyHint: tool.readOnly, openWorldHint: false, ...(tool.readOnly ? {} : { destructiveHint: tool.name === 'cancel_run' }) },
      // A client that asks for a task gets the run as one; any other call is answered as before.
      ...((TASK_TOOLS as readonly string[]).includes(tool.name) ? { execution: { taskSupport: 'optional' as const } } : {}),
    })),
  }));
  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const name = request.params.name;
    if (!Object.hasOwn(TESSERA_TOOLS, name)) throw new McpError(ErrorCode.InvalidParams, `no tool ${name}`);
    const tool = TESSERA_TOOLS[name as TesseraToolName];
    const raw = request.params.arguments ?? {};
    if (request.params.task !== undefined) return createTask(tool.name, raw, extra);
    if (tool.name === 'plan_run') {
      // Any request is welcome here: its problems are the answer.
      return handlers.plan_run({ request: (raw as { request?: unknown }).request } as ToolArguments<'plan_run'>, extra);
    }
    const parsed = tool.input.safeParse(raw);
    if (!parsed.success) return argumentsRefusal(name, parsed.error);
    return (handlers[tool.name] as (args: unknown, extra: Extra) => Promise<CallToolResult>)(parsed.data, extra);
  });

  server.registerResource(
    'run',
    new ResourceTemplate(RUN_RESOURCE_TEMPLATE, {
      list: async () => ({
        resources: (await client.listRuns({ limit: 20 })).runs.map((run) => ({
          uri: `tessera://runs/${encodeURIComponent(run.runId)}`,
          name: run.runId,
          title: run.goal.slice(0, 80),
          mimeType: 'application/json',
        })),
      }),
    }),
    { title: 'A tessera run', description: 'A run as get_run reads it: coverage first, compact.', mimeType: 'application/json' },
    async (uri, variables) => {
      const runId = decodeURIComponent(z.string().parse(variables.runId));
      try {
        return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(await readSummary(runId)) }] };
      } catch (error) {
        if (error instanceof TesseraApiError && error.status === 404) throw new McpError(ErrorCode.InvalidParams, `not found: no run ${runId} for this caller`);
        throw error;
      }
    },
  );
  return server;
};
