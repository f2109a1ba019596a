import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, expect, test } from 'vitest';
import { z } from 'zod';
import { TesseraFunction } from '../../lib/infra/tessera-function';
import { cdkJsonContext } from './synth';

const outdir = mkdtempSync(join(tmpdir(), 'tessera-bundle-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

const Probe = z.object({ handler: z.custom<(event: unknown) => Promise<unknown>>((value) => typeof value === 'function') });

test('the shared esbuild settings produce an ESM bundle (Powertools, SDK v3, zod) that loads and runs', { timeout: 120_000 }, async () => {
  // Bundling is on here (no aws:cdk:bundling-stacks override): this is what `cdk synth` does.
  const app = new App({ outdir, context: { ...cdkJsonContext(), 'aws:cdk:enable-asset-metadata': true } });
  const stack = new Stack(app, 'Bundle');
  new TesseraFunction(stack, 'Probe', {
    entry: 'test/infra/fixtures/bundle-probe.ts',
    serviceName: 'probe',
    description: 'bundling probe',
  });
  const [fn] = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function'));
  const assetDir = join(outdir, String(fn?.Metadata?.['aws:asset:path']));

  expect(readdirSync(assetDir).sort()).toEqual(['index.mjs', 'index.mjs.map']);
  const code = readFileSync(join(assetDir, 'index.mjs'), 'utf8');
  expect(code.startsWith("import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);")).toBe(true);
  // The SDK is bundled, not left to whatever version the runtime ships.
  expect(code).not.toMatch(/from\s*["']@aws-sdk\//);

  const probe = Probe.parse(await import(pathToFileURL(join(assetDir, 'index.mjs')).href));
  // 41 guests at ten portions a tub need five tubs; at 500 pence a tub that is 2,500 pence.
  await expect(probe.handler({ guests: 41 })).resolves.toEqual({ tubs: 5, pence: 2500 });
  await expect(probe.handler({ guests: 0 })).rejects.toThrow();
});

test('a real handler bundles with no X-Ray SDK, and the function keeps Lambda active tracing', { timeout: 120_000 }, async () => {
  const app = new App({ outdir, context: { ...cdkJsonContext(), 'aws:cdk:enable-asset-metadata': true } });
  const stack = new Stack(app, 'Traced');
  // The deadline function creates the SFN and SQS clients of lib/runtime/aws.ts, which the Tracer once wrapped.
  new TesseraFunction(stack, 'Deadline', { entry: 'functions/deadline.ts', serviceName: 'tessera', description: 'deadline' });
  const template = Template.fromStack(stack);
  const [fn] = Object.values(template.findResources('AWS::Lambda::Function'));
  const code = readFileSync(join(outdir, String(fn?.Metadata?.['aws:asset:path']), 'index.mjs'), 'utf8');
  // The bundle holds the SDK clients it uses…
  expect(code).toContain('SFNClient');
  // …and none of the X-Ray SDK (end of support 2027-02-25) or Powertools Tracer.
  expect(code).not.toMatch(/aws-xray-sdk|captureAWSv3Client|AWSXRay/);
  // Traces come from Lambda itself: active tracing on the function.
  template.hasResourceProperties('AWS::Lambda::Function', { TracingConfig: { Mode: 'Active' } });
});
