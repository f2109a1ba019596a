import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startLocalForRun } from '../../lib/cli/local';
import { createPlanCommand } from '../../lib/cli/plan';
import { runCli, type CliIo } from '../../lib/cli/router';
import { createRunCommand } from '../../lib/cli/run';
import { serveCommand } from '../../lib/cli/serve';
import { workerModuleFromPackageJson } from '../../lib/workers/worker-module';

/*
 * The CLI runs the user's worker module: `--workers PATH`, else package.json's
 * `"tessera": { "workers": PATH }`. A module that is missing or exports no registry ends the
 * command with one line and exit 1, before anything starts.
 */

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/workers/${name}`, import.meta.url));
const INVOICES = fixture('invoices.ts');

const invoiceRequest = JSON.stringify({
  goal: 'Total two invoices',
  universe: { dimension: 'ids', noun: 'invoice', ids: ['INV-1', 'INV-2'] },
  subtasks: [
    {
      id: 'I',
      worker: 'invoice-lines',
      scope: { ids: ['INV-1', 'INV-2'] },
      required: true,
      justification: 'the total is the answer',
      deadlineSeconds: 30,
      budget: { modelCalls: 1, estimatedCostPerCall: 1 },
    },
  ],
  budget: { modelCalls: 1, costLimit: 10 },
});

const cli = async (argv: string[], files: Record<string, string> = {}) => {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    out: (text) => void out.push(text),
    err: (text) => void err.push(text),
    readText: async (path) => files[path] ?? Promise.reject(new Error(`ENOENT: no such file or directory, open '${path}'`)),
  };
  const commands = { plan: createPlanCommand(), run: createRunCommand({ startLocal: startLocalForRun }), serve: serveCommand };
  const code = await runCli(argv, commands, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
};

describe('tessera plan --workers', () => {
  it("validates against that module's kinds: its own kind tiles, an example kind is unknown", async () => {
    const planned = await cli(['plan', 'run.json', '--workers', INVOICES, '--json'], { 'run.json': invoiceRequest });
    expect(planned.code).toBe(0);
    expect(JSON.parse(planned.out)).toMatchObject({ ok: true, subtasks: [{ id: 'I', worker: 'invoice-lines' }] });

    const tax = invoiceRequest.replace('invoice-lines', 'tax-statements');
    const rejected = await cli(['plan', 'run.json', '--workers', INVOICES, '--json'], { 'run.json': tax });
    expect(rejected.code).toBe(1);
    expect(JSON.parse(rejected.out)).toMatchObject({ ok: false, problems: [{ path: 'subtasks.0.worker' }] });
  });

  it('a missing module, or one without a registry, is one line and exit 1', async () => {
    expect(await cli(['plan', 'run.json', '--workers', 'no/such/workers.ts'], { 'run.json': invoiceRequest })).toEqual({
      code: 1,
      out: '',
      err: 'tessera: worker module no/such/workers.ts does not exist',
    });
    const noRegistry = await cli(['plan', 'run.json', '--workers', fixture('no-registry.ts')], { 'run.json': invoiceRequest });
    expect(noRegistry.code).toBe(1);
    expect(noRegistry.err.split('\n')).toHaveLength(1);
    expect(noRegistry.err).toMatch(/^tessera: worker module .*no-registry\.ts must export its registry: export const registry = createRegistry\(\[\.\.\.\]\)/);
  });
});

describe("a worker module whose alternate source cannot take its primary's input", () => {
  it('is refused when it loads, with one line naming both kinds, before anything runs', async () => {
    // One import per file: vitest's module runner does not evaluate a module that threw a second time.
    const module = fixture('mismatched-alternate.ts');
    const planned = await cli(['plan', 'run.json', '--workers', module], { 'run.json': invoiceRequest });
    expect(planned).toEqual({
      code: 1,
      out: '',
      err:
        `tessera: worker module ${module} failed to load: worker kind "helpdesk": alternate source "ticket-export" has another input schema than ` +
        '"helpdesk", so it cannot take the input of a re-check of "helpdesk"\'s gaps: give both kinds the same input schema, or declare ' +
        'recheckInput on "helpdesk" to map its input to "ticket-export"\'s',
    });
  });
});

describe('tessera serve and run --workers', () => {
  it('refuse a missing module with one line before starting any emulator', async () => {
    const line = 'tessera: worker module no/such/workers.ts does not exist';
    expect(await cli(['serve', '--workers', 'no/such/workers.ts'])).toEqual({ code: 1, out: '', err: line });
    const run = await cli(['run', 'run.json', '--workers', 'no/such/workers.ts'], { 'run.json': invoiceRequest });
    expect(run.code).toBe(1);
    // `run` first says it starts a local cloud; the failure is the last line, and nothing started.
    expect(run.err.split('\n').at(-1)).toBe(line);
  });
});

describe('package.json "tessera": { "workers" }', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-project-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('names the module relative to the package.json, found from any directory below it', () => {
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'app', tessera: { workers: 'src/workers.ts' } }));
    mkdirSync(join(dir, 'src', 'deep'), { recursive: true });
    expect(workerModuleFromPackageJson(join(dir, 'src', 'deep'))).toBe(join(dir, 'src', 'workers.ts'));
  });

  it('is undefined when the nearest package.json has no such field', () => {
    const other = join(dir, 'other');
    mkdirSync(other, { recursive: true });
    writeFileSync(join(other, 'package.json'), JSON.stringify({ name: 'other' }));
    expect(workerModuleFromPackageJson(other)).toBeUndefined();
  });
});
