import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The package as a stranger gets it: built, packed with `npm pack`, installed into an empty
 * project (`npm init -y`) with aws-cdk-lib and constructs, then used through its public entry
 * points only. npm installs from its local cache when it can (`--prefer-offline`).
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

let work: string;
let project: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'tessera-empty-'));
  await run(process.execPath, [join(root, 'scripts/build-package.mjs')], { cwd: root });
  await run('npm', ['pack', '--silent', '--pack-destination', work], { cwd: root });
  const tarball = readdirSync(work).find((name) => name.endsWith('.tgz'));
  if (tarball === undefined) throw new Error(`npm pack wrote no tarball into ${work}`);
  project = join(work, 'project');
  mkdirSync(project);
  await run('npm', ['init', '-y'], { cwd: project });
  await run('npm', ['pkg', 'set', 'type=module'], { cwd: project });
  const peers = ['aws-cdk-lib', 'constructs'].map((name) => `${name}@${rootManifest.devDependencies[name]}`);
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(work, tarball), ...peers, `zod@${rootManifest.dependencies.zod}`], {
    cwd: project,
    maxBuffer: 16 * 1024 * 1024,
  });
  writeFileSync(join(project, 'workers.mjs'), WORKERS);
  writeFileSync(join(project, 'check.mjs'), CHECK);
  writeFileSync(join(project, 'app.mjs'), APP);
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

  it('installs the tessera command', async () => {
    const { stdout } = await run(join(project, 'node_modules/.bin/tessera'), ['--help'], { cwd: project });
    expect(stdout).toMatch(/^ {2}init\s+create a new project/m);
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
