import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startLocalForRun } from '../../lib/cli/local';
import { runCli, type CliIo } from '../../lib/cli/router';
import { createRunCommand, RUN_EXIT } from '../../lib/cli/run';
import type { RunResource } from '../../lib/contract';
import { scoutRun, taxRun } from '../web/fixtures';

/*
 * An incomplete answer looks incomplete: `tessera run` says "succeeded, incomplete" with the
 * missing questions and the unsettled gaps, and `--require-complete` lets a script tell it from
 * a complete one by the exit status (3), while a plain `tessera run` keeps exiting 0 for any run
 * that succeeded.
 */

const SCOUT_FILE = readFileSync(new URL('../../examples/scout.json', import.meta.url), 'utf8');

/** A real API on 127.0.0.1 that accepts any run and returns `run` as it ended. */
const fakeApi = async (run: RunResource): Promise<{ server: Server; url: string }> => {
  const server = createServer((request, response) => {
    const send = (status: number, body: unknown) => response.writeHead(status, { 'content-type': 'application/json', etag: '"t1"' }).end(JSON.stringify(body));
    if (request.method === 'POST') return send(202, { runId: run.runId, status: 'running', location: `/runs/${run.runId}` });
    return send(200, run);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
};

const tessera = async (argv: string[]) => {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (text) => void out.push(text), err: (text) => void err.push(text), readText: async () => SCOUT_FILE };
  const code = await runCli(argv, { run: createRunCommand({ startLocal: startLocalForRun }) }, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
};

describe('tessera run, when the answer is incomplete', () => {
  let server: Server | undefined;
  afterEach(() => new Promise((resolve) => (server?.listening ? server.close(resolve) : resolve(undefined))));
  const serve = async (run: RunResource) => {
    const api = await fakeApi(run);
    server = api.server;
    return ['--api', api.url, '--token', 't'];
  };

  it('says "succeeded, incomplete", then the missing question by its text and the unsettled gap, and exits 0', async () => {
    const result = await tessera(['run', 'examples/scout.json', ...(await serve(scoutRun()))]);

    expect(result.code).toBe(RUN_EXIT.succeeded);
    expect(result.out.split('\n').slice(0, 4)).toEqual([
      'Run run-scout succeeded, incomplete',
      'Missing   q3 (Which live deals mention Vantage?)',
      'Unsettled crm:vantage  not read by C.r2 (timed_out), unchecked',
      'Answer    Vantage raised prices.',
    ]);
  });

  it('exits 3 with --require-complete, for people and for --json alike', async () => {
    const api = await serve(scoutRun());
    expect((await tessera(['run', 'examples/scout.json', '--require-complete', ...api])).code).toBe(RUN_EXIT.incomplete);
    const json = await tessera(['run', 'examples/scout.json', '--require-complete', '--json', ...api]);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.out)).toMatchObject({ status: 'succeeded', answer: { coverage: { complete: false } } });
  });

  it('exits 0 with --require-complete when the answer is complete, and prints no Missing or Unsettled line', async () => {
    const result = await tessera(['run', 'examples/tax-2025.json', '--require-complete', ...(await serve(taxRun()))]);
    expect(result.code).toBe(0);
    expect(result.out.split('\n')[0]).toBe(`Run ${taxRun().runId} succeeded`);
    expect(result.out).not.toMatch(/^(Missing|Unsettled)/m);
  });

  it('still exits 2 for a failed run with --require-complete: failure outranks incompleteness', async () => {
    const error = { code: 'RequiredGapError', message: 'required coverage is missing: C.r2:timed_out' };
    const failed: RunResource = { ...scoutRun(), status: 'failed', error };
    const result = await tessera(['run', 'examples/scout-required.json', '--require-complete', ...(await serve(failed))]);
    expect(result.code).toBe(RUN_EXIT.notSucceeded);
    expect(result.out.split('\n').slice(0, 3)).toEqual([
      'Run run-scout failed',
      'Missing   q3 (Which live deals mention Vantage?)',
      'Unsettled crm:vantage  not read by C.r2 (timed_out), unchecked',
    ]);
  });

  it('lists at most ten unsettled gaps, then how many more', async () => {
    const ids = Array.from({ length: 12 }, (_, i) => `crm:${String(i + 1).padStart(2, '0')}`);
    const run = scoutRun();
    const gaps = ids.map((id) => ({ ids: [id], kind: 'observed' as const, subtaskId: 'C', status: 'unchecked' as const }));
    const coverage = { ...run.answer!.coverage, gaps };
    const result = await tessera(['run', 'examples/scout.json', ...(await serve({ ...run, answer: { ...run.answer!, coverage } }))]);
    const lines = result.out.split('\n');
    const unsettled = lines.slice(
      lines.findIndex((line) => line.startsWith('Unsettled')),
      lines.findIndex((line) => line.startsWith('Answer')),
    );
    expect(unsettled).toHaveLength(11);
    expect(unsettled[0]).toBe('Unsettled crm:01  observed by C, unchecked');
    expect(unsettled[9]).toBe('          crm:10  observed by C, unchecked');
    expect(unsettled[10]).toBe('          … and 2 more');
  });

  it('documents --require-complete and every exit status in --help', async () => {
    const help = await tessera(['run', '--help']);
    expect(help.code).toBe(0);
    expect(help.out.split('\n')[0]).toBe(
      'usage: tessera run FILE [--json] [--require-complete] [--api URL] [--token-file PATH] [--idempotency-key KEY] [--workers PATH]',
    );
    expect(help.out).toContain('  0  the run succeeded (with an incomplete answer too, unless --require-complete)');
    expect(help.out).toContain('  2  the run failed or was cancelled (its coverage is still printed)');
    expect(help.out).toContain('  3  --require-complete: the run succeeded, but its answer is not complete');
  });
});
