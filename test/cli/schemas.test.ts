import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { renderSchemas, SCHEMAS_DIR } from '../../scripts/generate-schemas';

/** The committed JSON Schemas and OpenAPI document must be exactly what the zod schemas generate. */
describe('schemas/', () => {
  const rendered = renderSchemas();

  it('holds exactly the generated files, byte for byte (run `npm run schemas` after changing lib/contract)', () => {
    expect(readdirSync(SCHEMAS_DIR).sort()).toEqual([...rendered.keys()].sort());
    for (const [name, text] of rendered) expect(readFileSync(join(SCHEMAS_DIR, name), 'utf8'), name).toBe(text);
  });

  it('describes the three routes with their auth, idempotency header and status codes', () => {
    const Operation = z.object({ responses: z.record(z.string(), z.unknown()), parameters: z.array(z.object({ name: z.string(), in: z.string() })).optional() });
    const OpenApi = z.object({ openapi: z.string(), security: z.unknown(), paths: z.record(z.string(), z.record(z.string(), Operation)) });
    const doc = OpenApi.parse(JSON.parse(rendered.get('openapi.json') ?? '{}'));
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    const routes = Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => [`${method.toUpperCase()} ${path}`, Object.keys(op.responses).sort()]));
    expect(routes).toEqual([
      ['POST /runs', ['200', '202', '400', '401', '409', '500']],
      ['GET /runs/{runId}', ['200', '401', '404', '500']],
      ['POST /runs/{runId}/cancel', ['200', '401', '404', '409', '500']],
    ]);
    expect(doc.paths['/runs']?.post?.parameters).toContainEqual(expect.objectContaining({ name: 'Idempotency-Key', in: 'header' }));
  });

  it('generates the run request on its input side: defaults are optional, required fields are listed', () => {
    const parsed: unknown = JSON.parse(rendered.get('run-request.schema.json') ?? '{}');
    expect(parsed).toMatchObject({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', required: ['goal', 'universe', 'budget'] });
  });
});
