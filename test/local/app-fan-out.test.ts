import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { appPropsRefused, fanOutLine } from '../../lib/cli/serve';
import { InvalidConstructProps } from '../../lib/infra/errors';
import { synthesizeLocalTemplate } from '../../lib/local/local-template';
import { FAN_OUT_METADATA_KEY, type FanOutMetadata } from '../../lib/infra/fan-out-metadata';
import { chooseFanOut, fanOutsInAssembly, projectFanOut, type AppFanOut } from '../../lib/local/app-fan-out';
import { ProjectAppError } from '../../lib/local/errors';

/*
 * How `tessera serve` finds the fan-out of a project's CDK app: the app runs with the CDK CLI's
 * environment, and each TesseraFanOut is read from the cloud assembly by its metadata. The
 * assemblies here are written by hand (and by a stand-in app, a few lines of Node), so every case
 * is exact; test/local/app-fan-out.int.test.ts synthesizes a real app and runs a cloud from it.
 */

const root = mkdtempSync(join(tmpdir(), 'tessera-app-fan-out-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const dir = (): string => {
  const path = join(root, String((dirs += 1)));
  mkdirSync(path, { recursive: true });
  return path;
};

const metadata = (over: Partial<FanOutMetadata> = {}): FanOutMetadata => ({
  version: 1,
  workers: '/home/me/app/src/workers.ts',
  kinds: { 'todo-review': { maxConcurrency: 2 } },
  workerTimeoutSeconds: 30,
  workerBatchingWindowSeconds: 0,
  maxDeadlineSeconds: 300,
  mapMaxConcurrency: 40,
  batchConcurrency: 40,
  batchSubtasks: 500,
  tenantDailyAllowance: { modelCalls: 2000, costLimit: 200_000 },
  ...over,
});

const entry = (data: unknown) => ({ type: FAN_OUT_METADATA_KEY, data });
const write = (path: string, json: unknown) => writeFileSync(path, JSON.stringify(json));

describe('fanOutsInAssembly', () => {
  it('reads fan-outs from inline stack metadata, a metadata file and a nested assembly, and nothing else', () => {
    const assembly = dir();
    const nested = join(assembly, 'assembly-Prod');
    mkdirSync(nested);
    write(join(assembly, 'manifest.json'), {
      version: '48.0.0',
      artifacts: {
        Dev: {
          type: 'aws:cloudformation:stack',
          metadata: { '/Dev/FanOut': [{ type: 'aws:cdk:logicalId', data: 'X' }, entry(metadata({ maxDeadlineSeconds: 60 }))] },
        },
        Tools: { type: 'aws:cloudformation:stack', additionalMetadataFile: 'Tools.metadata.json' },
        Tree: { type: 'cdk:tree', properties: { file: 'tree.json' } },
        Prod: { type: 'cdk:cloud-assembly', properties: { directoryName: 'assembly-Prod', displayName: 'Prod' } },
      },
    });
    write(join(assembly, 'Tools.metadata.json'), {
      '/Tools': [{ type: 'aws:cdk:info', data: 'hello' }],
      '/Tools/Queue': [{ type: 'aws:cdk:logicalId', data: 'Q' }],
    });
    write(join(nested, 'manifest.json'), { artifacts: { ProdStack: { type: 'aws:cloudformation:stack', additionalMetadataFile: 'ProdStack.metadata.json' } } });
    write(join(nested, 'ProdStack.metadata.json'), { '/Prod/ProdStack/FanOut': [entry(metadata({ workerTimeoutSeconds: 10 }))] });

    expect(fanOutsInAssembly(assembly, 'cdk.json')).toEqual([
      { constructPath: 'Dev/FanOut', metadata: metadata({ maxDeadlineSeconds: 60 }) },
      { constructPath: 'Prod/ProdStack/FanOut', metadata: metadata({ workerTimeoutSeconds: 10 }) },
    ]);
  });

  it('names the field of metadata it cannot use, with the construct', () => {
    const assembly = dir();
    const { maxDeadlineSeconds: _dropped, ...withoutDeadline } = metadata();
    write(join(assembly, 'manifest.json'), {
      artifacts: { S: { type: 'aws:cloudformation:stack', metadata: { '/S/FanOut': [entry({ ...withoutDeadline, workerTimeoutSeconds: '30' })] } } },
    });
    expect(() => fanOutsInAssembly(assembly, 'cdk.json')).toThrow(
      new ProjectAppError(
        'cdk.json',
        'the tessera:fan-out metadata of S/FanOut is not usable: workerTimeoutSeconds: Invalid input: expected number, received string; ' +
          'maxDeadlineSeconds: Invalid input: expected number, received undefined',
      ),
    );
  });
});

describe('chooseFanOut', () => {
  const dev: AppFanOut = { constructPath: 'Dev/FanOut', metadata: metadata() };
  const prod: AppFanOut = { constructPath: 'Prod/FanOut', metadata: metadata({ maxDeadlineSeconds: 900 }) };

  it('takes the only one, or none', () => {
    expect(chooseFanOut([dev], undefined, 'cdk.json')).toBe(dev);
    expect(chooseFanOut([], undefined, 'cdk.json')).toBeUndefined();
  });

  it('refuses several without --construct, naming the candidates', () => {
    expect(() => chooseFanOut([dev, prod], undefined, 'cdk.json')).toThrow(
      'tessera: the CDK app of cdk.json: the app has 2 TesseraFanOut constructs: pass --construct PATH with one of Dev/FanOut, Prod/FanOut',
    );
  });

  it('takes the one --construct names, with or without the leading slash, and refuses a path that names none', () => {
    expect(chooseFanOut([dev, prod], 'Prod/FanOut', 'cdk.json')).toBe(prod);
    expect(chooseFanOut([dev, prod], '/Dev/FanOut', 'cdk.json')).toBe(dev);
    expect(() => chooseFanOut([dev, prod], 'Prod', 'cdk.json')).toThrow(
      'tessera: the CDK app of cdk.json: --construct Prod names no TesseraFanOut of the app (its TesseraFanOut constructs: Dev/FanOut, Prod/FanOut)',
    );
    expect(() => chooseFanOut([], 'Prod/FanOut', 'cdk.json')).toThrow('--construct Prod/FanOut: the app has no TesseraFanOut');
  });
});

/**
 * A stand-in for a CDK app: it checks that bundling is off, then writes a cloud assembly with one
 * fan-out whose max deadline is the context's `deadline`, as a real app would read its context.
 */
const STAND_IN_APP = `
import { writeFileSync } from 'node:fs';
const context = JSON.parse(process.env.CDK_CONTEXT_JSON);
if (JSON.stringify(context['aws:cdk:bundling-stacks']) !== '[]') throw new Error('bundling is on');
if (context.fail) throw new TypeError('Cannot read properties of undefined (reading "issuer")');
const out = process.env.CDK_OUTDIR;
const fanOuts = context.withoutFanOut ? {} : { '/S/FanOut': [{ type: '${FAN_OUT_METADATA_KEY}', data: { ...JSON.parse(process.env.META), maxDeadlineSeconds: context.deadline } }] };
writeFileSync(out + '/manifest.json', JSON.stringify({ artifacts: { S: { type: 'aws:cloudformation:stack', additionalMetadataFile: 'S.metadata.json' } } }));
writeFileSync(out + '/S.metadata.json', JSON.stringify(fanOuts));
`;

const project = (cdkJson: unknown, saved?: unknown): string => {
  const path = dir();
  writeFileSync(join(path, 'app.mjs'), STAND_IN_APP);
  if (cdkJson !== undefined) write(join(path, 'cdk.json'), cdkJson);
  if (saved !== undefined) write(join(path, 'cdk.context.json'), saved);
  return path;
};

describe('projectFanOut', () => {
  process.env.META = JSON.stringify(metadata());

  it("runs the app with cdk.json's context over cdk.context.json's, bundling off, and returns its fan-out's props", async () => {
    const path = project({ app: 'node app.mjs', context: { deadline: 60 } }, { deadline: 30 });
    const { version: _version, workers: _workers, ...props } = metadata();
    expect(await projectFanOut({ project: path })).toEqual({
      source: 'app',
      app: 'node app.mjs',
      constructPath: 'S/FanOut',
      workers: '/home/me/app/src/workers.ts',
      props: { ...props, maxDeadlineSeconds: 60 },
    });
    // Only cdk.context.json sets it: the saved value reaches the app.
    expect(await projectFanOut({ project: project({ app: 'node app.mjs' }, { deadline: 30 }) })).toMatchObject({ props: { maxDeadlineSeconds: 30 } });
  });

  it("falls back to the construct's defaults, saying why, with no cdk.json, no app in it, or no fan-out in the app", async () => {
    const none = project(undefined);
    expect(await projectFanOut({ project: none })).toEqual({ source: 'default', reason: `no cdk.json in ${none}` });
    expect(await projectFanOut({ project: project({ context: {} }) })).toEqual({ source: 'default', reason: 'cdk.json names no "app"' });
    expect(await projectFanOut({ project: project({ app: 'node app.mjs', context: { withoutFanOut: true } }) })).toEqual({
      source: 'default',
      reason: 'the app `node app.mjs` has no TesseraFanOut',
    });
  });

  it("refuses an app that fails to synthesize with its error's line, and --construct without an app", async () => {
    const failing = project({ app: 'node app.mjs', context: { fail: true } });
    await expect(projectFanOut({ project: failing })).rejects.toThrow(
      new ProjectAppError(
        join(failing, 'cdk.json'),
        '`node app.mjs` failed to synthesize (exit 1): TypeError: Cannot read properties of undefined (reading "issuer")',
      ),
    );
    const none = project(undefined);
    await expect(projectFanOut({ project: none, construct: 'S/FanOut' })).rejects.toThrow(`--construct S/FanOut: there is no cdk.json`);
  });
});

describe('the line serve prints', () => {
  it('names the construct and the settings it took, or why the defaults apply', () => {
    const { version: _version, workers: _workers, ...props } = metadata();
    const app = { source: 'app', app: 'npx tsx bin/app.ts', constructPath: 'S/FanOut', workers: '/home/me/app/src/workers.ts', props } as const;
    expect(fanOutLine(app, '/home/me/app/src/workers.ts', '/home/me/app')).toBe(
      'Fan-out S/FanOut of the CDK app (`npx tsx bin/app.ts`): src/workers.ts; kinds todo-review ×2 (max concurrency); ' +
        'worker timeout 30 s; max deadline 300 s; batches of 500',
    );
    expect(fanOutLine(app, '/home/me/app/other.ts', '/home/me/app')).toContain('): other.ts (--workers); kinds');
    expect(fanOutLine({ source: 'default', reason: 'no cdk.json in /home/me/app' }, '/home/me/app/src/workers.ts', '/home/me/app')).toBe(
      "No fan-out from a CDK app (no cdk.json in /home/me/app): running TesseraFanOut's defaults with src/workers.ts",
    );
  });
});

describe("the app's props, checked again by the local fan-out", () => {
  it("refuses a kind that the worker module of --workers lacks, naming the field, as the app's problem", () => {
    const invoices = fileURLToPath(new URL('../fixtures/workers/invoices.ts', import.meta.url));
    let refused: unknown;
    try {
      synthesizeLocalTemplate(invoices, 'us-east-1', { kinds: { 'slow-invoices': { maxConcurrency: 2 } } });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(InvalidConstructProps);
    const { version: _version, workers: _workers, ...props } = metadata();
    const found = { source: 'app', app: 'npx tsx app.ts', constructPath: 'Strict/FanOut', workers: '/x/workers.ts', props } as const;
    expect(appPropsRefused(refused, found)).toEqual(
      new ProjectAppError(
        'cdk.json',
        `the props of Strict/FanOut do not work locally: kinds.slow-invoices: names no worker kind of ${invoices} (its kinds: invoice-lines)`,
      ),
    );
    // Not the app's: passed on as it is.
    const other = new Error('port in use');
    expect(appPropsRefused(other, found)).toBe(other);
    expect(appPropsRefused(refused, { source: 'default', reason: 'no cdk.json in /x' })).toBe(refused);
  });
});
