import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { TOKEN_FLAG_WARNING } from '../../lib/cli/api-target';
import { commands } from '../../lib/cli/main';
import { lostRunMessage, RUN_EXIT } from '../../lib/cli/run';
import { runCli } from '../../lib/cli/router';
import { terminal } from './support/terminal';
import { runsCommand } from '../../lib/cli/runs';
import { cliPackage } from '../../lib/cli/version';
import { RunResource } from '../../lib/contract';
import { scoutRun, taxRun } from '../web/fixtures';

/**
 * `tessera runs show|watch|cancel ID`, `tessera --version` and `TESSERA_API_URL`, against a real
 * HTTP server on 127.0.0.1 that answers as the API does: `GET /runs/{runId}` with an ETag and the
 * `If-None-Match` + `Prefer: wait` long-poll, `POST /runs/{runId}/cancel`, 404 for a run the
 * tenant does not have and 409 for cancelling one that has ended.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The tax run while round 1 runs: two of four subtasks ended. */
const runningTax = (): RunResource =>
  RunResource.parse({
    ...taxRun(),
    status: 'running',
    round: 1,
    answer: null,
    progress: { dispatched: 4, terminal: 2, byState: { ok: 2, running: 2 } },
    subtasks: taxRun()
      .subtasks.slice(0, 4)
      .map((s, i) => (i < 2 ? s : { ...s, state: 'running', observed: null })),
  });

interface Seen {
  readonly method: string | undefined;
  readonly path: string;
  readonly authorization: string | undefined;
  readonly ifNoneMatch: string | undefined;
  readonly prefer: string | undefined;
}

/**
 * One run, `versions[0]` first: a GET without `If-None-Match` gets the current version, a GET
 * holding the current tag gets the next one (the run changed while the long-poll waited). A cancel
 * of a running run answers it cancelled; of an ended one, 409.
 */
const fakeApi = async (versions: readonly RunResource[]) => {
  const seen: Seen[] = [];
  let current = 0;
  const tag = (i: number) => `"v${i}"`;
  const server: Server = createServer((request: IncomingMessage, response) => {
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    const header = (name: string) => request.headers[name] as string | undefined;
    seen.push({ method: request.method, path, authorization: header('authorization'), ifNoneMatch: header('if-none-match'), prefer: header('prefer') });
    const send = (status: number, body: unknown, etag?: string) =>
      response.writeHead(status, { 'content-type': 'application/json', ...(etag ? { etag } : {}) }).end(JSON.stringify(body));
    const run = versions[current]!;
    if (path !== `/runs/${run.runId}` && path !== `/runs/${run.runId}/cancel`) return send(404, { error: { code: 'RunNotFound', message: 'no such run' } });
    if (request.method === 'POST') {
      if (run.status !== 'running') return send(409, { error: { code: 'RunAlreadyEnded', message: `the run already ended ${run.status}` } });
      return send(200, { ...run, status: 'cancelled', progress: { dispatched: 4, terminal: 4, byState: { ok: 2, cancelled: 2 } } });
    }
    if (header('if-none-match') === tag(current) && current < versions.length - 1) current += 1;
    return send(200, versions[current], tag(current));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, seen, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
};

describe('tessera runs show|watch|cancel ID', () => {
  let server: Server | undefined;
  afterEach(() => new Promise((resolve) => (server?.listening ? server.close(resolve) : resolve(undefined))));
  const serve = async (versions: readonly RunResource[]) => {
    const api = await fakeApi(versions);
    server = api.server;
    return api;
  };

  it('runs watch follows the run with long-polls, prints its progress, then the answer as tessera run does, and exits 0', async () => {
    const api = await serve([runningTax(), taxRun()]);
    const t = terminal({ 'jwt.txt': 'jwt-from-file\n' });

    const code = await runsCommand.run(['watch', 'run-tax', '--api', api.url, '--token-file', 'jwt.txt'], t.io);

    expect(code).toBe(RUN_EXIT.succeeded);
    // Progress on stderr, one line per change (stderr is not a terminal here).
    expect(t.err).toEqual(['round 1 · 2/4 subtasks ended · ok 2, running 2', 'round 2 · 5/5 subtasks ended · ok 4, empty 1']);
    const out = t.out.join('\n').split('\n');
    expect(out[0]).toBe('Run run-tax succeeded');
    expect(out[1]).toBe('Answer    Deductible total: £1,137.47.');
    expect(out).toContain('Subtasks');
    // The first read holds no tag; the second holds v0 and asks the API to wait; the token came from the file, trimmed.
    expect(api.seen.map((s) => [s.method, s.path, s.ifNoneMatch])).toEqual([
      ['GET', '/runs/run-tax', undefined],
      ['GET', '/runs/run-tax', '"v0"'],
    ]);
    expect(api.seen[1]!.prefer).toMatch(/^wait=\d+$/);
    expect(api.seen.every((s) => s.authorization === 'Bearer jwt-from-file')).toBe(true);
  });

  it('runs watch exits 3 with --require-complete when the answer is incomplete, naming the missing question by id', async () => {
    const api = await serve([scoutRun()]);
    const t = terminal();

    const code = await runsCommand.run(['watch', 'run-scout', '--require-complete', '--api', api.url, '--token', 't'], t.io);

    expect(code).toBe(RUN_EXIT.incomplete);
    expect(t.out.join('\n').split('\n').slice(0, 2)).toEqual(['Run run-scout succeeded, incomplete', 'Missing   q3']);
    // --token works, and warns that it shows in the process list.
    expect(t.err[0]).toBe(TOKEN_FLAG_WARNING);
  });

  it('runs show prints a running run once, without waiting, with its progress; --json the resource as the API sent it', async () => {
    const api = await serve([runningTax(), taxRun()]);
    const env = process.env;
    process.env = { ...env, TESSERA_TOKEN: 'jwt-env' };
    try {
      const t = terminal();
      expect(await runsCommand.run(['show', 'run-tax', '--api', api.url], t.io)).toBe(0);
      const out = t.out.join('\n').split('\n');
      expect(out[0]).toBe('Run run-tax running');
      expect(out.at(-1)).toBe('Progress  round 1 · 2/4 subtasks ended · ok 2, running 2');
      expect(t.err).toEqual([]);

      const json = terminal();
      expect(await runsCommand.run(['show', 'run-tax', '--json', '--api', api.url], json.io)).toBe(0);
      expect(JSON.parse(json.out.join('\n'))).toEqual(runningTax());
    } finally {
      process.env = env;
    }
    expect(api.seen.map((s) => [s.method, s.ifNoneMatch, s.authorization])).toEqual([
      ['GET', undefined, 'Bearer jwt-env'],
      ['GET', undefined, 'Bearer jwt-env'],
    ]);
  });

  it('runs cancel cancels a running run and says how to see its answer; an ended run is refused (409), exit 1', async () => {
    const api = await serve([runningTax()]);
    const t = terminal({ jwt: 'j' });
    expect(await runsCommand.run(['cancel', 'run-tax', '--api', api.url, '--token-file', 'jwt'], t.io)).toBe(0);
    expect(t.out).toEqual(['Run run-tax cancelled (ok 2, cancelled 2)']);
    expect(t.err).toEqual(['Its answer, with coverage, follows when the run has wound down: tessera runs watch run-tax']);
    expect(api.seen.map((s) => [s.method, s.path])).toEqual([['POST', '/runs/run-tax/cancel']]);

    server?.close();
    const ended = await serve([taxRun()]);
    const refused = terminal({ jwt: 'j' });
    expect(await runsCommand.run(['cancel', 'run-tax', '--api', ended.url, '--token-file', 'jwt'], refused.io)).toBe(1);
    expect(refused.err).toEqual(['tessera runs cancel: POST /runs/{runId}/cancel answered 409 (RunAlreadyEnded: the run already ended succeeded)']);
  });

  it('says the API does not know a run (404) and exits 1, for show and watch alike', async () => {
    const api = await serve([taxRun()]);
    for (const action of ['show', 'watch']) {
      const t = terminal({ jwt: 'j' });
      expect(await runsCommand.run([action, 'run-nope', '--api', api.url, '--token-file', 'jwt'], t.io)).toBe(1);
      expect(t.out).toEqual([]);
      expect(t.err.join('\n')).toContain('404');
    }
  });

  it.each([
    [['show'], 'tessera runs show: expected one run ID (got 0)'],
    [['watch', 'a', 'b'], 'tessera runs watch: expected one run ID (got 2)'],
    [['cancel', 'a', '--require-complete'], "tessera runs cancel: Unknown option '--require-complete'"],
    [['show', 'a', '--api', 'http://127.0.0.1:9'], 'tessera runs show: --api needs a token: pass --token-file PATH or set TESSERA_TOKEN'],
    [
      ['show', 'a', '--api', 'ftp://example.com', '--token-file', 'jwt'],
      'tessera runs show: --api must be an http:// or https:// URL (got "ftp://example.com")',
    ],
    [['show', 'a', '--api', 'http://127.0.0.1:9', '--token', 'x', '--token-file', 'jwt'], 'tessera runs show: give --token or --token-file, not both'],
    [['show', 'a', '--api', 'http://127.0.0.1:9', '--token-file', 'empty'], 'empty (--token-file) is empty'],
    [
      ['show', 'a', '--api', 'http://127.0.0.1:9', '--token-file', 'missing'],
      "missing (--token-file) cannot be read: ENOENT: no such file or directory, open 'missing'",
    ],
  ])('refuses %j before any request, naming the problem (exit 1)', async (args, problem) => {
    const env = process.env;
    process.env = { ...env, TESSERA_TOKEN: '', TESSERA_API_URL: '' };
    try {
      const t = terminal({ jwt: 'j', empty: ' \n' });
      expect(await runCli(['runs', ...args], { runs: runsCommand }, t.io)).toBe(1);
      // parseArgs adds a hint to its own messages, after the part that names the option.
      expect(t.err.at(-1)?.split('\n')[0]?.startsWith(problem)).toBe(true);
    } finally {
      process.env = env;
    }
  });
});

describe('TESSERA_API_URL', () => {
  let server: Server | undefined;
  afterEach(() => new Promise((resolve) => (server?.listening ? server.close(resolve) : resolve(undefined))));

  it('names the API when --api is not given, through the real bin, with TESSERA_TOKEN as the token', async () => {
    const api = await fakeApi([taxRun()]);
    server = api.server;
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['bin/tessera.mjs', 'runs', 'show', 'run-tax'], {
      cwd: ROOT,
      env: { ...process.env, TESSERA_API_URL: api.url, TESSERA_TOKEN: 'jwt-env' },
    });
    expect(stdout.split('\n')[0]).toBe('Run run-tax succeeded');
    expect(stderr).toBe('');
    expect(api.seen.map((s) => [s.method, s.path, s.authorization])).toEqual([['GET', '/runs/run-tax', 'Bearer jwt-env']]);
  });

  it('loses to --api, and is checked and named when it is not a URL', async () => {
    const api = await fakeApi([taxRun()]);
    server = api.server;
    const env = process.env;
    process.env = { ...env, TESSERA_API_URL: 'http://127.0.0.1:9', TESSERA_TOKEN: 'j' };
    try {
      const t = terminal();
      expect(await runsCommand.run(['show', 'run-tax', '--api', api.url], t.io)).toBe(0);
      expect(api.seen).toHaveLength(1);
      process.env.TESSERA_API_URL = 'api.example.com';
      const bad = terminal();
      expect(await runCli(['runs', 'show', 'run-tax'], { runs: runsCommand }, bad.io)).toBe(1);
      expect(bad.err[0]?.split('\n')[0]).toBe('tessera runs show: TESSERA_API_URL must be an http:// or https:// URL (got "api.example.com")');
      delete process.env.TESSERA_TOKEN;
      process.env.TESSERA_API_URL = api.url;
      const tokenless = terminal();
      expect(await runCli(['runs'], { runs: runsCommand }, tokenless.io)).toBe(1);
      expect(tokenless.err[0]?.split('\n')[0]).toBe('tessera runs: TESSERA_API_URL needs a token: pass --token-file PATH or set TESSERA_TOKEN');
    } finally {
      process.env = env;
    }
  });
});

describe('tessera --version', () => {
  it("prints the local package's name and version from its package.json, in-process and through the bin", async () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'packages', 'local', 'package.json'), 'utf8')) as { name: string; version: string };
    expect(manifest.name).toBe('@tessera-fanout/local');
    expect(cliPackage()).toEqual({ name: manifest.name, version: manifest.version });
    const t = terminal();
    expect(await runCli(['--version'], commands, t.io, { version: () => 'tessera-x 9.9.9' })).toBe(0);
    expect(t.out).toEqual(['tessera-x 9.9.9']);
    const { stdout } = await promisify(execFile)(process.execPath, ['bin/tessera.mjs', '--version'], { cwd: ROOT });
    expect(stdout).toBe(`${manifest.name} ${manifest.version}\n`);
  });

  it("finds the package root's package.json in the installed layout (dist/lib/cli/), where no packages/local exists", () => {
    const root = mkdtempSync(join(tmpdir(), 'tessera-version-'));
    writeFileSync(join(root, 'package.json'), JSON.stringify({ name: '@scope/pkg', version: '1.2.3' }));
    expect(cliPackage(pathToFileURL(join(root, 'dist', 'lib', 'cli', 'version.js')).href)).toEqual({ name: '@scope/pkg', version: '1.2.3' });
  });
});

describe('lostRunMessage', () => {
  it('points at tessera runs watch and show, with the --api of a deployed stack', () => {
    expect(lostRunMessage({ runId: 'r-1', apiUrl: 'https://api.example.com/', local: false }, 'the API no longer knows this run (404)').split('\n')).toEqual([
      'tessera: stopped waiting for run r-1: the API no longer knows this run (404).',
      '  The run was accepted; it may still be running. To follow it: tessera runs watch r-1 --api https://api.example.com',
      '  (as it is now: tessera runs show r-1 --api https://api.example.com).',
    ]);
    expect(lostRunMessage({ runId: 'r-1', apiUrl: 'http://127.0.0.1:7700', local: true }, 'x').split('\n')[1]).toBe(
      '  The run was accepted; it may still be running. To follow it: tessera runs watch r-1',
    );
  });
});
