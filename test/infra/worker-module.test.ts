import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { build } from 'esbuild';
import { beforeAll, describe, expect, test } from 'vitest';
import { InvalidConstructProps } from '../../lib/infra/errors';
import { TesseraFanOut, type TesseraFanOutProps } from '../../lib/infra/fan-out';
import { FAN_OUT_METADATA_KEY } from '../../lib/infra/fan-out-metadata';
import { cdkJsonContext, logicalIdAt } from './synth';
import { ENV } from '../../lib/runtime/environment';

/*
 * The worker kinds come from the user's worker module, read at synth time: a module the
 * repository has never heard of gets its queue and event-source mapping, and settings for a kind
 * it does not register fail synth.
 */

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/workers/${name}`, import.meta.url));
const INVOICES = fixture('invoices.ts');
const ESM_REQUIRE_BANNER = "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);";

const synth = (props: Partial<TesseraFanOutProps>) => {
  const stack = new Stack(new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [], 'aws:cdk:enable-path-metadata': true } }), 'Own');
  const fanOut = new TesseraFanOut(stack, 'FanOut', {
    auth: { issuer: 'https://issuer.example.com', audiences: ['a'] },
    workers: { entry: INVOICES },
    ...props,
  });
  return { fanOut, template: Template.fromStack(stack) };
};

const refusal = (props: Partial<TesseraFanOutProps>): InvalidConstructProps => {
  try {
    synth(props);
  } catch (error) {
    if (error instanceof InvalidConstructProps) return error;
    throw error;
  }
  throw new Error('synth did not fail');
};

describe('a worker module outside the repository', () => {
  // One synth for the tests that read it: reading the module costs a child process.
  let synthesized: ReturnType<typeof synth>;
  beforeAll(() => {
    synthesized = synth({ kinds: { 'invoice-lines': { maxConcurrency: 7 } } });
  });

  test('gets a queue and an event-source mapping per kind, with its kinds setting', () => {
    const { fanOut, template } = synthesized;
    const queue = logicalIdAt(template, 'AWS::SQS::Queue', '/Queues/invoice-lines/Resource');
    // The kind's queue and nothing for any example kind (besides the shared dead-letter queue).
    const kindQueues = Object.values(template.findResources('AWS::SQS::Queue'))
      .map((resource) => String(resource.Metadata?.['aws:cdk:path'] ?? ''))
      .filter((path) => path.includes('/Queues/') && !path.includes('/Queues/DeadLetter/'));
    expect(kindQueues).toEqual(['Own/FanOut/Queues/invoice-lines/Resource']);
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', 1);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [queue, 'Arn'] },
      ScalingConfig: { MaximumConcurrency: 7 },
    });
    expect(Object.keys(fanOut.queues)).toEqual(['invoice-lines']);
    const api = template.toJSON().Resources[logicalIdAt(template, 'AWS::Lambda::Function', '/ApiFunction/Function/Resource')];
    expect(api.Properties.Environment.Variables[ENV.workerKinds]).toBe('["invoice-lines"]');
  });

  test('writes the settings the local cloud runs as construct metadata, defaults applied, durations in seconds', () => {
    const { fanOut } = synthesized;
    const entries = fanOut.node.metadata.filter((entry) => entry.type === FAN_OUT_METADATA_KEY);
    // The construct's defaults (lib/infra/defaults.ts) for everything but the kind's concurrency.
    expect(entries.map((entry) => entry.data)).toEqual([
      {
        version: 1,
        workers: INVOICES,
        kinds: { 'invoice-lines': { maxConcurrency: 7 } },
        workerTimeoutSeconds: 120,
        workerBatchingWindowSeconds: 0,
        maxDeadlineSeconds: 900,
        mapMaxConcurrency: 40,
        batchConcurrency: 40,
        batchSubtasks: 500,
        tenantDailyAllowance: { modelCalls: 2000, costLimit: 200_000 },
      },
    ]);
    // The deployed template carries none of it.
    expect(JSON.stringify(synthesized.template.toJSON())).not.toContain(FAN_OUT_METADATA_KEY);
  });

  test('a kinds key naming no registered kind fails synth, naming the key', () => {
    const error = refusal({ kinds: { nope: { maxConcurrency: 3 } } });
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]).toMatch(/^kinds\.nope: names no worker kind of .*invoices\.ts \(its kinds: invoice-lines\)$/);
  });

  test('a missing module, or one without a registry, fails synth saying what to export', { timeout: 60_000 }, () => {
    expect(refusal({ workers: { entry: fixture('absent.ts') } }).problems[0]).toMatch(/^workers\.entry: worker module .*absent\.ts does not exist/);
    expect(refusal({ workers: { entry: fixture('no-registry.ts') } }).problems[0]).toMatch(
      /^workers\.entry: .*no-registry\.ts must export its registry: export const registry = createRegistry/,
    );
  });

  test('the worker function bundles an entry joining its handler with the worker module, and the bundle loads', { timeout: 120_000 }, async () => {
    const { fanOut } = synthesized;
    const worker = fanOut.functions.worker.bundleEntry;
    expect(worker).toMatch(/\/\.tessera\/entries\/[0-9a-f]{16}\/worker\.mjs$/);
    const text = readFileSync(worker, 'utf8');
    // The fixture's registry is its default export, so the entry imports that.
    expect(text).toContain(`import registry from '${relative(dirname(worker), INVOICES)}';`);
    expect(text).toContain('export const handler = handlerFor(registry);');
    // The deadline function runs no worker kind: its entry only re-exports its handler.
    expect(readFileSync(fanOut.functions.deadline.bundleEntry, 'utf8')).toMatch(/export \{ handler \} from '.*functions\/deadline\.ts';/);

    const outdir = mkdtempSync(join(tmpdir(), 'tessera-entry-'));
    try {
      const outfile = join(outdir, 'index.mjs');
      await build({ entryPoints: [worker], outfile, bundle: true, platform: 'node', format: 'esm', logLevel: 'silent', banner: { js: ESM_REQUIRE_BANNER } });
      const loaded = (await import(pathToFileURL(outfile).href)) as { handler?: unknown };
      expect(typeof loaded.handler).toBe('function');
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });
});
