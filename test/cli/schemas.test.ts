import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { renderSchemas, SCHEMAS_DIR } from '../../scripts/generate-schemas';

type JsonNode = { readonly [key: string]: unknown };
const isNode = (value: unknown): value is JsonNode => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Every property of every object schema under `node`, with its path, skipping the conditions of
 * cross-field rules (`if`: they restate fields, they are not fields) and `$ref`s (their component
 * carries its description).
 */
const propertiesOf = (node: unknown, path = ''): { path: string; schema: JsonNode }[] => {
  if (Array.isArray(node)) return node.flatMap((item, i) => propertiesOf(item, `${path}[${i}]`));
  if (!isNode(node)) return [];
  const own = isNode(node.properties)
    ? Object.entries(node.properties).flatMap(([name, schema]) => (isNode(schema) && schema.$ref === undefined ? [{ path: `${path}.${name}`, schema }] : []))
    : [];
  const nested = Object.entries(node)
    .filter(([key]) => key !== 'if')
    .flatMap(([key, child]) => propertiesOf(child, key === 'properties' ? path : `${path}.${key}`));
  return [...own, ...nested];
};

const described = (schema: JsonNode): boolean => typeof schema.description === 'string' && schema.description.trim().length > 0;

/** The committed JSON Schemas and OpenAPI document must be exactly what the zod schemas generate. */
describe('schemas/', () => {
  const rendered = renderSchemas();

  it('describes every policy field, its retries included, in the run request schema and the OpenAPI document', () => {
    const request = JSON.parse(rendered.get('run-request.schema.json') ?? '{}') as JsonNode;
    const openapi = JSON.parse(rendered.get('openapi.json') ?? '{}') as { components: { schemas: { RunRequest: JsonNode } } };
    for (const root of [request, openapi.components.schemas.RunRequest]) {
      const policy = (root.properties as { policy: JsonNode }).policy;
      expect(described(policy)).toBe(true);
      const fields = propertiesOf(policy);
      const paths = ['.retry', '.onRequiredGap', '.onOptionalGap', '.maxRounds', '.retry.timed_out', '.retry.invalid', '.retry.empty'];
      expect(fields.map((f) => f.path)).toEqual(paths);
      expect(fields.filter((f) => !described(f.schema)).map((f) => f.path)).toEqual([]);
      // Each description states the field's default, as docs/api.md does.
      for (const { schema } of fields.filter((f) => f.path !== '.retry')) expect(schema.description).toMatch(/default/i);
    }
  });

  it("describes every field of every contract schema (a $ref carries its component's description)", () => {
    for (const [name, text] of rendered) {
      const fields = propertiesOf(JSON.parse(text));
      expect(fields.length, name).toBeGreaterThan(0);
      expect(
        fields.filter((f) => !described(f.schema)).map((f) => f.path),
        name,
      ).toEqual([]);
    }
  });

  it('holds exactly the generated files, byte for byte (run `npm run schemas` after changing lib/contract)', () => {
    expect(readdirSync(SCHEMAS_DIR).sort()).toEqual([...rendered.keys()].sort());
    for (const [name, text] of rendered) expect(readFileSync(join(SCHEMAS_DIR, name), 'utf8'), name).toBe(text);
  });

  it('describes the five routes and /mcp with their auth, idempotency header and status codes', () => {
    const Operation = z.object({
      responses: z.record(z.string(), z.unknown()),
      parameters: z.array(z.object({ name: z.string(), in: z.string() })).optional(),
    });
    const OpenApi = z.object({ openapi: z.string(), security: z.unknown(), paths: z.record(z.string(), z.record(z.string(), Operation)) });
    const doc = OpenApi.parse(JSON.parse(rendered.get('openapi.json') ?? '{}'));
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    const routes = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => [`${method.toUpperCase()} ${path}`, Object.keys(op.responses).sort()]),
    );
    // Every answer the handler or API Gateway can give: the fuzz suite checks status-code conformance.
    expect(routes).toEqual([
      ['GET /runs', ['200', '400', '401', '403', '429', '500', '503']],
      ['POST /runs', ['200', '202', '400', '401', '403', '409', '413', '429', '500', '503']],
      ['GET /runs/{runId}', ['200', '304', '400', '401', '403', '404', '429', '500', '503']],
      ['GET /runs/{runId}/subtasks', ['200', '400', '401', '403', '404', '429', '500', '503']],
      ['POST /runs/{runId}/cancel', ['200', '400', '401', '403', '404', '409', '429', '500', '503']],
      ['POST /mcp', ['200', '202', '400', '401', '403', '406', '415', '429', '500', '503']],
      ['GET /mcp', ['401', '403', '405', '429', '500', '503']],
    ]);
    expect(doc.paths['/runs']?.post?.parameters).toContainEqual(expect.objectContaining({ name: 'Idempotency-Key', in: 'header' }));
    expect(doc.paths['/runs']?.get?.parameters?.map((p) => `${p.in} ${p.name}`)).toEqual(['query status', 'query limit', 'query cursor']);
    expect(doc.paths['/runs/{runId}']?.get?.parameters?.map((p) => `${p.in} ${p.name}`)).toEqual([
      'path runId',
      'header If-None-Match',
      'query subtasks',
      'header Prefer',
    ]);
    expect(doc.paths['/runs/{runId}/subtasks']?.get?.parameters?.map((p) => `${p.in} ${p.name}`)).toEqual(['path runId', 'query limit', 'query cursor']);
  });

  it('states the cross-field rules JSON Schema can express: subtasks or split, one way to split, a justification when required', () => {
    const doc = JSON.parse(rendered.get('openapi.json') ?? '{}') as { components: { schemas: { RunRequest: Record<string, unknown> } } };
    const request = doc.components.schemas.RunRequest as { oneOf: unknown; properties: { subtasks: { items: unknown }; split: Record<string, unknown> } };
    expect(request.oneOf).toEqual([{ required: ['subtasks'] }, { required: ['split'] }]);
    const justified = { if: { properties: { required: { const: true } }, required: ['required'] }, then: { required: ['justification'] } };
    expect(request.properties.subtasks.items).toMatchObject(justified);
    expect(request.properties.split).toMatchObject({
      ...justified,
      oneOf: ['parts', 'by', 'boundaries', 'chunkSize', 'groups'].map((field) => ({ required: [field] })),
    });
  });

  it('offers every request of examples/ as an example body of POST /runs', () => {
    const doc = JSON.parse(rendered.get('openapi.json') ?? '{}') as {
      paths: { '/runs': { post: { requestBody: { content: { 'application/json': { examples: Record<string, { value: unknown }> } } } } } };
    };
    const examples = doc.paths['/runs'].post.requestBody.content['application/json'].examples;
    const files = readdirSync(join(SCHEMAS_DIR, '..', 'examples')).filter((name) => name.endsWith('.json'));
    expect(Object.keys(examples).sort()).toEqual(files.map((name) => name.replace(/\.json$/, '')).sort());
    expect(examples['catering']?.value).toEqual(JSON.parse(readFileSync(join(SCHEMAS_DIR, '..', 'examples', 'catering.json'), 'utf8')));
  });

  it('generates the run request on its input side: defaults are optional, required fields are listed', () => {
    const parsed: unknown = JSON.parse(rendered.get('run-request.schema.json') ?? '{}');
    expect(parsed).toMatchObject({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', required: ['goal', 'universe', 'budget'] });
  });
});
