import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
import { Coverage, ErrorBody, ReconcileInput, RunAccepted, RunRequest, RunResource } from '../lib/contract';

/**
 * Writes the JSON Schemas and the OpenAPI document of the public contract into `schemas/`,
 * generated from the zod schemas in lib/contract (never written by hand). `npm run schemas`
 * regenerates them; test/cli/schemas.test.ts fails when the committed files drift.
 */

type JsonObject = Record<string, unknown>;

const CONTRACT = 'tessera public contract v1';

const jsonFile = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/** A standalone JSON Schema (draft 2020-12) for one contract type. */
const standalone = (schema: z.ZodType, title: string, io: 'input' | 'output'): JsonObject => ({
  ...z.toJSONSchema(schema, { io }),
  title,
  description: `${CONTRACT}: ${title}. Generated from lib/contract by scripts/generate-schemas.ts.`,
});

/** Component schemas referencing each other by `#/components/schemas/<Name>`. */
const components = (entries: Record<string, z.ZodType>, io: 'input' | 'output'): Record<string, JsonObject> => {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(entries)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, { io, uri: (id) => `#/components/schemas/${id}` });
  // OpenAPI components are not documents of their own: drop the draft and id markers.
  return Object.fromEntries(Object.entries(schemas).map(([id, schema]) => [id, Object.fromEntries(Object.entries(schema).filter(([key]) => key !== '$schema' && key !== '$id'))]));
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: JsonObject, description: string) => ({ description, content: { 'application/json': { schema } } });
const failure = (description: string) => json(ref('ErrorBody'), description);

const runIdParameter = { name: 'runId', in: 'path', required: true, schema: { type: 'string', minLength: 1 }, description: 'The id `POST /runs` returned.' };

const commonFailures = {
  '401': { description: 'Missing or invalid bearer token (answered by API Gateway, without a body of ours).' },
  '500': failure('Internal error; the body never carries internals.'),
};

/** OpenAPI 3.1 for the three routes of DESIGN.md §2. */
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
      post: {
        operationId: 'createRun',
        summary: 'Start a run',
        description: 'Validates the request and plans its subtasks; nothing is written or sent when any problem is found (400, every problem with its field path).',
        parameters: [
          {
            name: 'Idempotency-Key',
            in: 'header',
            required: false,
            schema: { type: 'string', minLength: 1, maxLength: 255 },
            description: 'The same key with the same body returns the same run; with a different body, 409.',
          },
        ],
        requestBody: { required: true, content: { 'application/json': { schema: ref('RunRequest') } } },
        responses: {
          '202': { ...json(ref('RunAccepted'), 'Accepted: the run started.'), headers: { Location: { schema: { type: 'string' }, description: 'The run resource, /runs/{runId}.' } } },
          '200': json(ref('RunAccepted'), 'The run an earlier request with the same Idempotency-Key and body started.'),
          '400': failure('The request does not validate or does not tile its universe; `error.issues` names every problem.'),
          '409': failure('The Idempotency-Key was used with a different body.'),
          ...commonFailures,
        },
      },
    },
    '/runs/{runId}': {
      get: {
        operationId: 'getRun',
        summary: 'Read a run, its subtasks and, once ended, its answer with coverage',
        parameters: [runIdParameter],
        responses: {
          '200': json(ref('RunResource'), 'The run.'),
          '404': failure('No run with this id for the caller’s tenant.'),
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
          '404': failure('No run with this id for the caller’s tenant.'),
          '409': failure('The run had already ended.'),
          ...commonFailures,
        },
      },
    },
  },
  components: {
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'The tenant is a claim of the token.' } },
    schemas: {
      ...components({ RunRequest }, 'input'),
      ...components({ RunAccepted, RunResource, Coverage, ErrorBody }, 'output'),
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
