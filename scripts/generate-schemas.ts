import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
import {
  Coverage,
  ErrorBody,
  GatewayError,
  IdempotencyKey,
  MAX_CURSOR_LENGTH,
  MAX_WAIT_SECONDS,
  MCP_PATH,
  PAGED_RUN_SUBTASKS,
  ReconcileInput,
  RUN_LIST_LIMITS,
  RunAccepted,
  RunList,
  RunRequest,
  RunResource,
  RunStatus,
  RunSubtasksForm,
  RunSummary,
  SplitSpec,
  SUBTASK_PAGE_LIMITS,
  SubtaskList,
  SubtaskSpec,
} from '../lib/contract';

/**
 * Writes the JSON Schemas and the OpenAPI document of the public contract into `schemas/`,
 * generated from the zod schemas in lib/contract (never written by hand). `npm run schemas`
 * regenerates them; test/cli/schemas.test.ts fails when the committed files drift.
 */

type JsonObject = Record<string, unknown>;

const CONTRACT = 'tessera public contract v1';

const jsonFile = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/**
 * The rules between fields that zod checks in code (`superRefine`) and JSON Schema can state too,
 * added to the generated schemas so that clients and fuzzers see them. A rule JSON Schema cannot
 * state (a subtask's scope must be of its universe's dimension; the scopes must tile the universe)
 * stays the planner's, answered with 400 and `issues`.
 */
const crossFieldRules = new Map<z.ZodType, JsonObject>([
  // `required: true` needs a `justification`.
  [SubtaskSpec, { if: { properties: { required: { const: true } }, required: ['required'] }, then: { required: ['justification'] } }],
  [
    SplitSpec,
    {
      if: { properties: { required: { const: true } }, required: ['required'] },
      then: { required: ['justification'] },
      // Exactly one way to split.
      oneOf: ['parts', 'by', 'boundaries', 'chunkSize', 'groups'].map((field) => ({ required: [field] })),
    },
  ],
  // Either subtasks or split, not both and not neither.
  [RunRequest, { oneOf: [{ required: ['subtasks'] }, { required: ['split'] }] }],
]);

const withCrossFieldRules = (ctx: { zodSchema: unknown; jsonSchema: JsonObject }): void => {
  const rules = crossFieldRules.get(ctx.zodSchema as z.ZodType);
  if (rules) Object.assign(ctx.jsonSchema, rules);
};

/** A standalone JSON Schema (draft 2020-12) for one contract type. */
const standalone = (schema: z.ZodType, title: string, io: 'input' | 'output'): JsonObject => ({
  ...z.toJSONSchema(schema, { io, override: withCrossFieldRules }),
  title,
  description: `${CONTRACT}: ${title}. Generated from lib/contract by scripts/generate-schemas.ts.`,
});

/**
 * A tuple whose positions share one schema (`[start, end]` lines: two whole numbers from 1) is
 * written as a fixed-length array of that schema, which means exactly the same. Schemathesis
 * rewrites `prefixItems` into the draft-7 `items: [...]` for generation and then judged responses
 * of `GET /runs/{runId}/subtasks` with that rewritten form under draft 2020-12, where it is not a
 * schema; the fixed-length form reads the same under every draft.
 */
const sameSchemaTuples = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sameSchemaTuples);
  if (typeof value !== 'object' || value === null) return value;
  const node = Object.fromEntries(Object.entries(value).map(([key, child]) => [key, sameSchemaTuples(child)])) as JsonObject;
  const { prefixItems, items, minItems, maxItems, ...rest } = node;
  if (!Array.isArray(prefixItems) || items !== false || minItems !== prefixItems.length || maxItems !== prefixItems.length) return node;
  const [first] = prefixItems;
  if (!prefixItems.every((item) => JSON.stringify(item) === JSON.stringify(first))) return node;
  return { ...rest, items: first, minItems, maxItems };
};

/** Component schemas referencing each other by `#/components/schemas/<Name>`. */
const components = (entries: Record<string, z.ZodType>, io: 'input' | 'output'): Record<string, JsonObject> => {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(entries)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, { io, uri: (id) => `#/components/schemas/${id}`, override: withCrossFieldRules });
  // OpenAPI components are not documents of their own: drop the draft and id markers.
  return Object.fromEntries(
    Object.entries(schemas).map(([id, schema]) => [
      id,
      sameSchemaTuples(Object.fromEntries(Object.entries(schema).filter(([key]) => key !== '$schema' && key !== '$id'))) as JsonObject,
    ]),
  );
};

/** The JSON Schema of one header or parameter value, without the document markers. */
const valueSchema = (schema: z.ZodType): JsonObject => {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: 'input' });
  return rest;
};

const EXAMPLES_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'examples');

/**
 * The run requests of examples/ as OpenAPI request-body examples: documentation, and the cases
 * the fuzz suite sends first, so that it also walks the success path. Each must satisfy the
 * contract's schema (the planner may still refuse one, as tax-2025-overlap shows on purpose).
 */
const requestExamples = (): Record<string, { summary: string; value: unknown }> =>
  Object.fromEntries(
    readdirSync(EXAMPLES_DIR)
      .filter((name) => name.endsWith('.json'))
      .sort()
      .map((name) => {
        const value: unknown = JSON.parse(readFileSync(join(EXAMPLES_DIR, name), 'utf8'));
        RunRequest.parse(value);
        return [name.replace(/\.json$/, ''), { summary: `examples/${name}`, value }];
      }),
  );

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: JsonObject, description: string) => ({ description, content: { 'application/json': { schema } } });
const failure = (description: string) => json(ref('ErrorBody'), description);

const runIdParameter = { name: 'runId', in: 'path', required: true, schema: { type: 'string', minLength: 1 }, description: 'The id `POST /runs` returned.' };

const gateway = (description: string) => json(ref('GatewayError'), description);
const eitherError = (description: string) => json({ anyOf: [ref('ErrorBody'), ref('GatewayError')] }, description);

/** Answers every route can give: API Gateway's own, the tenant check, and the unexpected. */
const commonFailures = {
  '401': gateway('Missing or invalid bearer token (answered by API Gateway before the function).'),
  '403': failure('The token has no tenant claim (`NoTenant`), or one that is not a string of 1-256 bytes of UTF-8 (`InvalidTenant`).'),
  '429': gateway('Throttled by API Gateway; retry later.'),
  '500': failure('Internal error; the body never carries internals.'),
  '503': eitherError('The run could not be started yet (`ExecutionNotStarted`, with Retry-After), or the function did not answer in time (API Gateway).'),
};

/** How a run's id in a `POST /runs` answer is followed to the run's other operations. */
const runLinks = {
  GetRun: { operationId: 'getRun', parameters: { runId: '$response.body#/runId' } },
  ListSubtasks: { operationId: 'listSubtasks', parameters: { runId: '$response.body#/runId' } },
  CancelRun: { operationId: 'cancelRun', parameters: { runId: '$response.body#/runId' } },
};

/** A JSON-RPC 2.0 message of MCP: its shapes are the protocol's, not the tessera contract's. */
const jsonRpc = {
  type: 'object',
  description: 'A JSON-RPC 2.0 message of the Model Context Protocol.',
  required: ['jsonrpc'],
  properties: { jsonrpc: { const: '2.0', description: 'The JSON-RPC version.' } },
  additionalProperties: true,
};
const jsonRpcAnswer = (description: string) => ({ description, content: { 'application/json': { schema: jsonRpc } } });

/**
 * `/mcp`: the MCP server over stateless Streamable HTTP (docs/agents.md). The tools and their
 * schemas are listed by the protocol itself (`tools/list`), so only the transport is described.
 */
const mcpPath = {
  post: {
    operationId: 'mcp',
    summary: 'One MCP message (JSON-RPC 2.0) over stateless Streamable HTTP: the tessera tools for agents',
    description:
      'Send `Accept: application/json, text/event-stream`. A request is answered with an SSE stream carrying its progress notifications and then its result; a notification or response is answered 202.',
    requestBody: { required: true, content: { 'application/json': { schema: { anyOf: [jsonRpc, { type: 'array', items: jsonRpc }] } } } },
    responses: {
      '200': { description: 'The answer, as an SSE stream of JSON-RPC messages.', content: { 'text/event-stream': { schema: { type: 'string' } } } },
      '202': { description: 'A notification or response was accepted; nothing to answer.' },
      '400': jsonRpcAnswer('Not JSON, not JSON-RPC, or a batch holding an initialize request (a JSON-RPC error).'),
      '406': jsonRpcAnswer('The Accept header does not take both application/json and text/event-stream (a JSON-RPC error).'),
      '415': jsonRpcAnswer('The body is not application/json (a JSON-RPC error).'),
      ...commonFailures,
    },
  },
  get: {
    operationId: 'mcpStream',
    summary: 'Not offered: the server is stateless and sends nothing outside a request',
    responses: { '405': jsonRpcAnswer('Method not allowed; send POST (a JSON-RPC error).'), ...commonFailures },
  },
};

/** OpenAPI 3.1 for the five routes of docs/api.md, and the MCP endpoint. */
const openApi = (): JsonObject => ({
  openapi: '3.1.0',
  info: {
    title: 'tessera',
    version: '1.0.0',
    description: `${CONTRACT}. A run fans one question out to subtasks with machine-readable scopes; every answer carries its coverage.`,
  },
  security: [{ bearerAuth: [] }],
  paths: {
    '/runs': {
      get: {
        operationId: 'listRuns',
        summary: 'List the caller’s tenant’s runs, newest first',
        description: 'Pages of run summaries, newest first (creation time, then run id). Follow `nextCursor` with the same `status` until it is absent.',
        parameters: [
          { name: 'status', in: 'query', required: false, schema: valueSchema(RunStatus), description: 'Only runs with this status.' },
          {
            name: 'limit',
            in: 'query',
            required: false,
            schema: { type: 'integer', minimum: RUN_LIST_LIMITS.min, maximum: RUN_LIST_LIMITS.max, default: RUN_LIST_LIMITS.default },
            description: 'Runs per page.',
          },
          {
            name: 'cursor',
            in: 'query',
            required: false,
            schema: { type: 'string', minLength: 1, maxLength: MAX_CURSOR_LENGTH },
            description: 'The `nextCursor` of the previous page, unchanged, with the same `status`.',
          },
        ],
        responses: {
          '200': json(ref('RunList'), 'A page of runs.'),
          '400': failure(
            'A bad parameter, or a cursor that this API did not return to this tenant for this filter (`InvalidQuery`; `error.issues` names each parameter).',
          ),
          ...commonFailures,
        },
      },
      post: {
        operationId: 'createRun',
        summary: 'Start a run',
        description:
          'Validates the request and plans its subtasks; nothing is written or sent when any problem is found (400, every problem with its field path).',
        parameters: [
          {
            name: 'Idempotency-Key',
            in: 'header',
            required: false,
            schema: valueSchema(IdempotencyKey),
            description: 'The same key with the same body returns the same run; with a different body, 409.',
          },
        ],
        requestBody: { required: true, content: { 'application/json': { schema: ref('RunRequest'), examples: requestExamples() } } },
        responses: {
          '202': {
            ...json(ref('RunAccepted'), 'Accepted: the run started (or, for a repeated Idempotency-Key and body, the run it started).'),
            headers: { Location: { schema: { type: 'string' }, description: 'The run resource, /runs/{runId}.' } },
            links: runLinks,
          },
          '200': json(ref('RunAccepted'), 'The run an earlier request with the same Idempotency-Key and body started.'),
          '400': failure(
            'The request does not validate or does not tile its universe; `error.issues` names the first 100 problems and `error.issuesOmitted` counts the rest. Any query parameter is `InvalidQuery`.',
          ),
          '409': failure('The Idempotency-Key was used with a different body.'),
          '413': gateway('The body is over 10 MB (answered by API Gateway).'),
          ...commonFailures,
        },
      },
    },
    '/runs/{runId}': {
      get: {
        operationId: 'getRun',
        summary: 'Read a run, its subtasks and, once ended, its answer with coverage',
        description:
          'Every 200 carries a strong ETag. With If-None-Match naming the current tag the answer is 304 without a body. With Prefer: wait=N as well, the request is held up to N seconds and answered as soon as the run differs from the tag (200), or with 304 when N seconds pass without a change.',
        parameters: [
          runIdParameter,
          {
            name: 'If-None-Match',
            in: 'header',
            required: false,
            schema: { type: 'string' },
            description: 'An ETag of this run from an earlier answer (or a list of them, or `*`).',
          },
          {
            name: 'subtasks',
            in: 'query',
            required: false,
            schema: valueSchema(RunSubtasksForm),
            description: `\`page\`: only the first ${SUBTASK_PAGE_LIMITS.default} subtasks in id order, with \`subtasksPage\` linking the rest; \`none\`: no subtasks (counts, coverage and answer only). Without it, every subtask of a run of up to ${PAGED_RUN_SUBTASKS}, the first page of a larger one.`,
          },
          {
            name: 'Prefer',
            in: 'header',
            required: false,
            schema: { type: 'string', pattern: '^(.*,\\s*)?wait=([1-9]|1[0-9]|20)(\\s*,.*)?$' },
            description: `\`wait=N\`, N from 1 to ${MAX_WAIT_SECONDS} seconds: with If-None-Match, wait up to N seconds for the run to change. Other preferences are ignored.`,
          },
        ],
        responses: {
          '200': {
            ...json(ref('RunResource'), 'The run.'),
            headers: {
              ETag: { schema: { type: 'string' }, description: 'Strong tag of this representation.' },
              'Preference-Applied': { schema: { type: 'string' }, description: '`wait=N` when the request was held.' },
            },
          },
          '304': {
            description: 'Not modified: the run still matches If-None-Match (after waiting, with Prefer: wait). No body.',
            headers: {
              ETag: { schema: { type: 'string' }, description: 'The current tag.' },
              'Preference-Applied': { schema: { type: 'string' }, description: '`wait=N` when the request was held.' },
            },
          },
          '400': failure(
            'Prefer: wait out of range (`InvalidPreference`), a `subtasks` other than `page` or `none`, or another query parameter (`InvalidQuery`).',
          ),
          '404': eitherError('No run with this id for the caller’s tenant (`RunNotFound`), or no route for this path (API Gateway).'),
          ...commonFailures,
        },
      },
    },
    '/runs/{runId}/subtasks': {
      get: {
        operationId: 'listSubtasks',
        summary: 'Read a run’s subtasks a page at a time, in id order',
        description: `Follow \`nextCursor\` until it is absent. A run of more than ${PAGED_RUN_SUBTASKS} subtasks carries only its first page in \`GET /runs/{runId}\`; its \`subtasksPage.next\` is the page after it.`,
        parameters: [
          runIdParameter,
          {
            name: 'limit',
            in: 'query',
            required: false,
            schema: { type: 'integer', minimum: SUBTASK_PAGE_LIMITS.min, maximum: SUBTASK_PAGE_LIMITS.max, default: SUBTASK_PAGE_LIMITS.default },
            description: 'Subtasks per page.',
          },
          {
            name: 'cursor',
            in: 'query',
            required: false,
            schema: { type: 'string', minLength: 1, maxLength: MAX_CURSOR_LENGTH },
            description: 'The `nextCursor` of the previous page (or the cursor in `subtasksPage.next`), unchanged.',
          },
        ],
        responses: {
          '200': json(ref('SubtaskList'), 'A page of subtasks.'),
          '400': failure(
            'A bad parameter, or a cursor that this API did not return to this tenant for this run (`InvalidQuery`; `error.issues` names each parameter).',
          ),
          '404': eitherError('No run with this id for the caller’s tenant (`RunNotFound`), or no route for this path (API Gateway).'),
          ...commonFailures,
        },
      },
    },
    '/runs/{runId}/cancel': {
      post: {
        operationId: 'cancelRun',
        summary: 'Cancel a run: completed outcomes are kept, unfinished subtasks become cancelled',
        parameters: [runIdParameter],
        responses: {
          '200': json(ref('RunResource'), 'The run after cancellation.'),
          '400': failure('A query parameter, which this route takes none of (`InvalidQuery`; `error.issues` names each one).'),
          '404': eitherError('No run with this id for the caller’s tenant (`RunNotFound`), or no route for this path (API Gateway).'),
          '409': failure('The run had already ended.'),
          ...commonFailures,
        },
      },
    },
    [MCP_PATH]: mcpPath,
  },
  components: {
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'The tenant is a claim of the token.' } },
    schemas: {
      ...components({ RunRequest }, 'input'),
      ...components({ RunAccepted, RunResource, RunList, RunSummary, SubtaskList, Coverage, ErrorBody, GatewayError }, 'output'),
    },
  },
});

/**
 * Every generated file, by name under `schemas/`, with its exact text.
 *
 * @example
 * renderSchemas().get('coverage.schema.json') // '{\n  "$schema": …'
 */
export const renderSchemas = (): Map<string, string> =>
  new Map([
    ['run-request.schema.json', jsonFile(standalone(RunRequest, 'Run request (POST /runs, tessera run FILE)', 'input'))],
    ['coverage.schema.json', jsonFile(standalone(Coverage, 'Coverage (answer.coverage)', 'output'))],
    ['run-resource.schema.json', jsonFile(standalone(RunResource, 'Run resource (GET /runs/{runId})', 'output'))],
    ['reconcile-input.schema.json', jsonFile(standalone(ReconcileInput, 'Reconcile input (tessera reconcile FILE)', 'input'))],
    ['openapi.json', jsonFile(openApi())],
  ]);

/** The folder the files belong in. */
export const SCHEMAS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'schemas');

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  mkdirSync(SCHEMAS_DIR, { recursive: true });
  for (const [name, text] of renderSchemas()) {
    writeFileSync(join(SCHEMAS_DIR, name), text);
    console.log(`wrote schemas/${name}`);
  }
}
