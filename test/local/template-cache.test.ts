import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exampleWorkerModule } from '../../examples/app/cdk';
import { PACKAGE_ROOT } from '../../lib/infra/handler-metadata';
import { synthesizeLocalTemplate } from '../../lib/local/local-template';
import { cachedTemplate, cdkEnvironment, packageVersions, templateCacheKey, type TemplateInputs } from '../../lib/local/template-cache';

let root: string;
let cache: string;

const write = (path: string, text: string) => {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), text);
};

const inputs = (over: Partial<TemplateInputs> = {}): TemplateInputs => ({
  packageRoot: root,
  workers: { path: '/app/src/workers.ts', exportName: 'registry', kinds: ['invoices', 'receipts'] },
  region: 'us-east-1',
  packageVersions: { 'aws-cdk-lib': '2.276.0', constructs: '10.8.1', tessera: '0.1.0' },
  cdkEnvironment: {},
  ...over,
});

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'tessera-template-cache-'));
  cache = join(root, 'cache');
  write('lib/infra/fan-out.ts', 'export const queues = 1;\n');
  write('lib/infra/defaults.ts', 'export const timeout = 30;\n');
  write('functions/worker.ts', 'export const handler = () => 1;\n');
  write('cdk.json', JSON.stringify({ app: 'npx tsx bin/app.ts', context: { '@aws-cdk/core:newStyleStackSynthesis': true } }));
});

afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('templateCacheKey', () => {
  it('is the same for the same inputs', () => {
    expect(templateCacheKey(inputs())).toBe(templateCacheKey(inputs()));
  });

  it('changes when a source file of the construct changes, is added or is removed', () => {
    const before = templateCacheKey(inputs());
    write('lib/infra/defaults.ts', 'export const timeout = 31;\n');
    const edited = templateCacheKey(inputs());
    expect(edited).not.toBe(before);
    write('lib/infra/extra.ts', 'export {};\n');
    const added = templateCacheKey(inputs());
    expect(added).not.toBe(edited);
    rmSync(join(root, 'lib/infra/extra.ts'));
    expect(templateCacheKey(inputs())).toBe(edited);
    write('functions/worker.ts', 'export const handler = () => 2;\n');
    expect(templateCacheKey(inputs())).not.toBe(edited);
  });

  it('changes when a file moves, even with the same content', () => {
    const before = templateCacheKey(inputs());
    rmSync(join(root, 'lib/infra/defaults.ts'));
    write('lib/infra/settings.ts', 'export const timeout = 30;\n');
    expect(templateCacheKey(inputs())).not.toBe(before);
  });

  it("changes with cdk.json's context", () => {
    const before = templateCacheKey(inputs());
    write('cdk.json', JSON.stringify({ app: 'npx tsx bin/app.ts', context: { '@aws-cdk/core:newStyleStackSynthesis': false } }));
    expect(templateCacheKey(inputs())).not.toBe(before);
  });

  it("changes with the worker module's path, registry export and kinds (their order too)", () => {
    const base = inputs();
    const keys = [
      base,
      inputs({ workers: { ...base.workers, path: '/app/src/other-workers.ts' } }),
      inputs({ workers: { ...base.workers, exportName: 'default' } }),
      inputs({ workers: { ...base.workers, kinds: ['invoices'] } }),
      inputs({ workers: { ...base.workers, kinds: ['receipts', 'invoices'] } }),
    ].map(templateCacheKey);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("changes with the fan-out props given (the project's app's), and not with the order of their keys", () => {
    const keys = [
      inputs(),
      inputs({ fanOut: { maxDeadlineSeconds: 60 } }),
      inputs({ fanOut: { maxDeadlineSeconds: 61 } }),
      inputs({ fanOut: { kinds: { invoices: { maxConcurrency: 2 } } } }),
      inputs({ fanOut: { kinds: { invoices: { maxConcurrency: 3 } } } }),
    ].map(templateCacheKey);
    expect(new Set(keys).size).toBe(keys.length);
    const reordered = [
      inputs({ fanOut: { workerTimeoutSeconds: 3, maxDeadlineSeconds: 60, tenantDailyAllowance: { modelCalls: 1, costLimit: 2 } } }),
      inputs({ fanOut: { tenantDailyAllowance: { costLimit: 2, modelCalls: 1 }, maxDeadlineSeconds: 60, workerTimeoutSeconds: 3 } }),
    ].map(templateCacheKey);
    expect(reordered[0]).toBe(reordered[1]);
  });

  it('changes with the region, a package version and a CDK_ environment variable', () => {
    const keys = [
      inputs(),
      inputs({ region: 'eu-west-1' }),
      inputs({ packageVersions: { 'aws-cdk-lib': '2.277.0', constructs: '10.8.1', tessera: '0.1.0' } }),
      inputs({ packageVersions: { 'aws-cdk-lib': '2.276.0', constructs: '10.8.1', tessera: '0.2.0' } }),
      inputs({ cdkEnvironment: { CDK_CONTEXT_JSON: '{"a":1}' } }),
    ].map(templateCacheKey);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('ignores files that are not sources (a README beside the construct)', () => {
    const before = templateCacheKey(inputs());
    write('lib/infra/README.md', '# notes\n');
    expect(templateCacheKey(inputs())).toBe(before);
  });
});

describe('packageVersions and cdkEnvironment', () => {
  it('reads the installed versions, and says when a package is missing', () => {
    const installed = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'node_modules', 'aws-cdk-lib', 'package.json'), 'utf8')).version;
    // The core package resolves through its workspace link, as it does installed.
    const own = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'packages', 'tessera', 'package.json'), 'utf8')).version;
    expect(packageVersions(PACKAGE_ROOT, ['aws-cdk-lib', '@tessera-fanout/tessera', 'no-such-package-tessera'])).toEqual({
      'aws-cdk-lib': installed,
      '@tessera-fanout/tessera': own,
      'no-such-package-tessera': '(missing)',
    });
  });

  it('keeps only the CDK_ variables', () => {
    expect(cdkEnvironment({ CDK_DEFAULT_REGION: 'eu-west-1', HOME: '/root', AWS_REGION: 'us-east-1' })).toEqual({ CDK_DEFAULT_REGION: 'eu-west-1' });
  });
});

describe('cachedTemplate', () => {
  it('synthesizes on a miss, then serves the same template from the cache without synthesizing', async () => {
    let synths = 0;
    const synthesize = () => ((synths += 1), { Resources: { Queue: { Type: 'AWS::SQS::Queue', Properties: { VisibilityTimeout: 180 } } } });
    const first = await cachedTemplate({ dir: cache, key: 'k1', synthesize });
    const second = await cachedTemplate({ dir: cache, key: 'k1', synthesize });
    expect([first.source, second.source, synths]).toEqual(['synthesized', 'cache', 1]);
    expect(second.template).toEqual(first.template);
  });

  it('synthesizes again when the key changed (a changed input)', async () => {
    let synths = 0;
    const synthesize = () => ({ Resources: {}, n: (synths += 1) });
    await cachedTemplate({ dir: cache, key: 'before', synthesize });
    const after = await cachedTemplate({ dir: cache, key: 'after', synthesize });
    expect(after).toEqual({ source: 'synthesized', template: { Resources: {}, n: 2 } });
  });

  it('synthesizes again over an entry that does not parse, and repairs it', async () => {
    mkdirSync(cache, { recursive: true });
    writeFileSync(join(cache, 'template-k.json'), '{"Resources": {');
    const repaired = await cachedTemplate({ dir: cache, key: 'k', synthesize: () => ({ Resources: {} }) });
    expect(repaired.source).toBe('synthesized');
    expect((await cachedTemplate({ dir: cache, key: 'k', synthesize: () => ({ other: true }) })).template).toEqual({ Resources: {} });
  });

  it('still answers when the cache cannot be written', async () => {
    writeFileSync(join(root, 'a-file'), '');
    const result = await cachedTemplate({ dir: join(root, 'a-file', 'cache'), key: 'k', synthesize: () => ({ Resources: {} }) });
    expect(result).toEqual({ source: 'synthesized', template: { Resources: {} } });
  });

  it('keeps the eight newest entries', async () => {
    for (let i = 0; i < 10; i += 1) await cachedTemplate({ dir: cache, key: `k${i}`, synthesize: () => ({ i }) });
    expect(readdirSync(cache).filter((name) => name.startsWith('template-')).length).toBe(8);
  });

  it("stores exactly the synthesized local template: the cached copy equals the construct's synth", { timeout: 180_000 }, async () => {
    const workers = exampleWorkerModule({ faultInjection: false });
    const synthesized = synthesizeLocalTemplate(workers);
    await cachedTemplate({ dir: cache, key: 'real', synthesize: () => synthesized });
    const cached = await cachedTemplate({ dir: cache, key: 'real', synthesize: () => ({}) });
    expect(cached.source).toBe('cache');
    expect(cached.template).toStrictEqual(JSON.parse(JSON.stringify(synthesized)));
    expect(cached.template).toEqual(synthesized);
  });
});
