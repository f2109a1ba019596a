import { createTesseraClient, TesseraApiError, type TesseraClient } from '../client';
import type { RunResource } from '../contract';
import { UsageError } from './errors';
import { readLocalState } from './local-state';
import { formatProblems } from './output';
import { formatRun, progressLine } from './run-output';
import { fileArgs, readJson, type CliIo, type Command } from './router';

const USAGE = 'tessera run FILE [--json] [--api URL] [--token JWT] [--idempotency-key KEY] [--workers PATH]';

/** Exit codes of `tessera run`: the run's ending, or a problem with the call itself. */
export const RUN_EXIT = { succeeded: 0, requestError: 1, notSucceeded: 2 } as const;

/** Where runs go: a URL and a token, and what to stop afterwards (an in-process local cloud). */
export interface RunTarget {
  readonly apiUrl: string;
  readonly token: string;
  readonly description: string;
  stop?(): Promise<void>;
}

/** Live progress on stderr: one rewritten line on a terminal, a line per change otherwise. */
const progressPrinter = (io: CliIo) => {
  const tty = Boolean(process.stderr.isTTY);
  let last = '';
  return {
    update(run: RunResource) {
      const line = progressLine(run);
      if (line === last) return;
      last = line;
      if (tty) process.stderr.write(`\r\x1b[2K${line}`);
      else io.err(line);
    },
    done() {
      if (tty && last) process.stderr.write('\n');
    },
  };
};

/**
 * Submits a run request, shows progress while it runs, and prints the run: the answer and its
 * coverage statement, or with `json` exactly the run resource `GET /runs/{runId}` returns.
 *
 * @example
 * const code = await submitAndReport(io, client, body, { json: false });
 */
export const submitAndReport = async (
  io: CliIo,
  client: TesseraClient,
  body: unknown,
  options: { json: boolean; idempotencyKey?: string },
): Promise<number> => {
  let runId: string;
  try {
    runId = (await client.createRun(body as never, options.idempotencyKey ? { idempotencyKey: options.idempotencyKey } : {})).runId;
  } catch (error) {
    if (!(error instanceof TesseraApiError)) throw error;
    const issues = error.issues.map((issue) => ({ ...issue, code: issue.code as 'invalid_request' }));
    io.err(issues.length > 0 ? formatProblems(`the run request was rejected (${error.status})`, issues) : error.message);
    return RUN_EXIT.requestError;
  }
  io.err(`run ${runId} accepted`);
  const progress = progressPrinter(io);
  const run = await client.waitForRun(runId, { onProgress: (r) => progress.update(r) });
  progress.done();
  io.out(options.json ? JSON.stringify(run, null, 2) : formatRun(run));
  return run.status === 'succeeded' ? RUN_EXIT.succeeded : RUN_EXIT.notSucceeded;
};

/**
 * Starts the local cloud in this process (what `tessera run` does when none is running), running
 * the worker module `--workers` names (else package.json's).
 */
export type StartLocal = (io: CliIo, options: { workers?: string }) => Promise<RunTarget>;

const resolveTarget = async (values: ReadonlyMap<string, string>, io: CliIo, startLocal: StartLocal): Promise<RunTarget> => {
  const api = values.get('api');
  if (api !== undefined) {
    const token = values.get('token') ?? process.env.TESSERA_TOKEN;
    if (!token) throw new UsageError({ command: 'run', problem: '--api needs a token: pass --token JWT or set TESSERA_TOKEN', usage: USAGE });
    return { apiUrl: api, token, description: api };
  }
  const running = await readLocalState();
  if (running) return { apiUrl: running.apiUrl, token: values.get('token') ?? running.token, description: `the local cloud at ${running.apiUrl}` };
  const workers = values.get('workers');
  return startLocal(io, workers === undefined ? {} : { workers });
};

/**
 * `tessera run FILE`: runs a request against the local cloud (started in this process when
 * none is running) or, with `--api`, against a deployed stack. Exit 0 when the run succeeded,
 * 2 when it failed or was cancelled (its coverage is still printed), 1 on a usage or request error.
 *
 * @example
 * await createRunCommand({ startLocal }).run(['examples/tax-2025.json'], processIo());
 */
export const createRunCommand = (options: { startLocal: StartLocal }): Command => ({
  summary: 'run a request against the local cloud (or --api URL) with live progress; print the answer and its coverage',
  usage: USAGE,
  run: async (args, io) => {
    const parsed = fileArgs('run', USAGE, args, { flags: ['json'], options: ['api', 'token', 'idempotency-key', 'workers'] });
    const body = await readJson(io, parsed.file);
    const target = await resolveTarget(parsed.values, io, options.startLocal);
    try {
      const client = createTesseraClient({ apiUrl: target.apiUrl, token: target.token });
      const key = parsed.values.get('idempotency-key');
      return await submitAndReport(io, client, body, { json: parsed.flags.has('json'), ...(key ? { idempotencyKey: key } : {}) });
    } finally {
      await target.stop?.();
    }
  },
});
