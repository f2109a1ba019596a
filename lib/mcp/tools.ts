import { z } from 'zod';
import { IdempotencyKey, MAX_CURSOR_LENGTH, RunRequest, RunStatus } from '../contract';

/**
 * The tools an agent calls tessera with, named, described and typed once: the MCP server
 * (lib/mcp/server.ts) lists and parses them from here, and {@link toolDefinitions} gives the same
 * tools to function-calling frameworks that do not speak MCP. The input schemas are the contract's
 * zod schemas; their JSON Schema is generated from them, never written by hand.
 */

/** The most bytes of JSON `get_run` answers by default, whatever the size of the run. */
export const GET_RUN_MAX_BYTES = 8192;

/** Subtasks one `get_run` page may hold: 50 compact rows stay within {@link GET_RUN_MAX_BYTES}. */
export const SUBTASK_ROWS = { default: 20, min: 1, max: 50 } as const;

/** Runs one `list_runs` page may hold. */
export const RUN_ROWS = { default: 10, min: 1, max: 50 } as const;

/** How long one `wait_for_run` call may wait, in seconds, before it returns the run as it stands. */
export const WAIT_SECONDS = { default: 60, min: 1, max: 600 } as const;

const RunIdArgument = z.string().min(1).max(128).describe('The run id start_run returned.');
const Cursor = z.string().min(1).max(MAX_CURSOR_LENGTH).describe('The nextCursor of the previous page.');

const PlanRunInput = z.object({
  request: RunRequest.describe('The run request to check: the body start_run would send. Nothing is written.'),
});
const StartRunInput = z.object({
  request: RunRequest.describe('The run request, as plan_run accepted it.'),
  idempotencyKey: IdempotencyKey.describe('Your key for this run: the same key and request answer with the same run, so a retry never starts a second one.'),
});
const GetRunInput = z.object({
  runId: RunIdArgument,
  subtasks: z.boolean().default(false).describe('Also return a page of compact subtask rows (id order).'),
  limit: z.int().min(SUBTASK_ROWS.min).max(SUBTASK_ROWS.max).default(SUBTASK_ROWS.default).describe('Subtask rows per page.'),
  cursor: Cursor.optional(),
});
const WaitForRunInput = z.object({
  runId: RunIdArgument,
  timeoutSeconds: z
    .int()
    .min(WAIT_SECONDS.min)
    .max(WAIT_SECONDS.max)
    .default(WAIT_SECONDS.default)
    .describe('Return after this long even if the run is still running (a server may wait less: see waitedSeconds).'),
});
const CancelRunInput = z.object({ runId: RunIdArgument });
const ListRunsInput = z.object({
  status: RunStatus.optional(),
  limit: z.int().min(RUN_ROWS.min).max(RUN_ROWS.max).default(RUN_ROWS.default).describe('Runs per page, newest first.'),
  cursor: Cursor.optional(),
});

/** One tool: its name, what it teaches the model, and its input. */
export interface TesseraTool<Input extends z.ZodObject = z.ZodObject> {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly input: Input;
  /** Whether calling it changes nothing (MCP's `readOnlyHint`). */
  readonly readOnly: boolean;
}

const COMPLETE_FALSE =
  '`coverage.complete: false` means the answer is partial: say so, and name `missingQuestions` and the open gaps; never report it as the whole.';

/** Every tool, by name. The descriptions teach the contract in a few lines each. */
export const TESSERA_TOOLS = {
  plan_run: {
    name: 'plan_run',
    title: 'Check a run request',
    description: [
      'Check a proposed run request and return its plan (the subtasks it would dispatch), or every problem with its field path',
      '(relative to `request`) and what would fix it. Writes nothing: call it until `ok: true`, then start_run the same request.',
      'Scopes are half-open: `from` is included, `toExclusive` is not, so 2025-01-01..2025-04-01 is January to March and the next',
      'subtask starts at 2025-04-01. The subtasks must tile the universe: no gap, no overlap.',
      'A subtask with `required: true` needs a `justification`.',
    ].join(' '),
    input: PlanRunInput,
    readOnly: true,
  },
  start_run: {
    name: 'start_run',
    title: 'Start a run',
    description: [
      'Start a run of a request plan_run accepted, and return its runId. The idempotencyKey makes it safe to retry:',
      'the same key and request answer with the same run. A refused request returns its problems, as plan_run does.',
      'Then call wait_for_run.',
    ].join(' '),
    input: StartRunInput,
    readOnly: false,
  },
  get_run: {
    name: 'get_run',
    title: 'Read a run: coverage first',
    description: [
      `Read a run as a compact summary of at most ${GET_RUN_MAX_BYTES} bytes: its coverage first (complete or not, missing questions,`,
      'gaps, the statement), then the answer text, progress and usage. Long lists are cut and counted (`gapsOmitted`).',
      COMPLETE_FALSE,
      'A gap with status `confirmed_empty` or `data_found` was re-checked against another source and is settled; any other gap',
      'is unread data: follow it up (a new run over that region) or report it. `subtasks: true` adds a page of subtask rows.',
    ].join(' '),
    input: GetRunInput,
    readOnly: true,
  },
  wait_for_run: {
    name: 'wait_for_run',
    title: 'Wait for a run',
    description: [
      'Wait until the run ends or timeoutSeconds pass, sending progress notifications (subtasks ended out of dispatched, by state)',
      'when the call carries a progressToken; return the same summary as get_run. `ended: false` means the bound was reached:',
      `call it again. ${COMPLETE_FALSE}`,
    ].join(' '),
    input: WaitForRunInput,
    readOnly: true,
  },
  cancel_run: {
    name: 'cancel_run',
    title: 'Cancel a run',
    description: 'Cancel a running run: finished subtasks keep their outcomes, the rest become cancelled, and the answer is partial (complete: false).',
    input: CancelRunInput,
    readOnly: false,
  },
  list_runs: {
    name: 'list_runs',
    title: 'List runs',
    description: "List the caller's runs, newest first, a page at a time (pass nextCursor back as cursor); optionally of one status.",
    input: ListRunsInput,
    readOnly: true,
  },
} as const satisfies Record<string, TesseraTool>;

/** A tool's name. */
export type TesseraToolName = keyof typeof TESSERA_TOOLS;

/** The parsed arguments of a tool. */
export type ToolArguments<Name extends TesseraToolName> = z.output<(typeof TESSERA_TOOLS)[Name]['input']>;

/** A tool as function-calling frameworks take it: a name, a description and the JSON Schema of its arguments. */
export interface ToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
}

/**
 * The JSON Schema of a tool's arguments, as the caller writes them (defaults optional), generated
 * from its zod schema. The MCP server lists exactly this.
 */
export const inputJsonSchema = (tool: TesseraTool): Record<string, unknown> => z.toJSONSchema(tool.input, { io: 'input' }) as Record<string, unknown>;

/**
 * The tools as JSON tool definitions, for frameworks that do not speak MCP: the same names,
 * descriptions and schemas the MCP server lists.
 *
 * @example
 * const tools = toolDefinitions().map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.inputSchema } }));
 */
export const toolDefinitions = (): ToolDefinition[] =>
  Object.values(TESSERA_TOOLS).map((tool) => ({ name: tool.name, description: tool.description, inputSchema: inputJsonSchema(tool) }));
