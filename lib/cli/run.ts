import { z } from 'zod';
import { createTesseraClient, RunWaitTimeout, TesseraApiError, type TesseraClient } from '../client';
import type { PlanWarning, RunResource, SubtaskView } from '../contract';
import { API_OPTIONS, resolveApiTarget, type ApiFlags, type ApiTarget } from './api-target';
import { tracePhase } from '../local/startup-trace';
import { formatProblems, formatWarnings, printable } from './output';
import { formatRun, progressLine, type RequestQuestion } from './run-output';
import { fileArgs, readJson, type CliIo, type Command } from './router';
import { COMMAND_HELP } from './help';

const USAGE = COMMAND_HELP.run.usage;

/**
 * Exit codes of `tessera run`: the run's ending, or a problem with the call itself. `incomplete`
 * only with `--require-complete`: the run succeeded, but its answer is not complete (a question
 * unanswered, a gap unsettled); without the flag such a run exits 0, as every succeeded run does.
 */
export const RUN_EXIT = { succeeded: 0, requestError: 1, notSucceeded: 2, incomplete: 3 } as const;

/** Where runs go (a URL and a token), and what to stop afterwards (an in-process local cloud). */
export interface RunTarget extends ApiTarget {
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

/** Why waiting stopped, in words, or `undefined` for an error that is a bug. */
const waitFailure = (error: unknown): string | undefined => {
  if (error instanceof TesseraApiError && error.status === 404) return 'the API no longer knows this run (404)';
  if (error instanceof TesseraApiError && error.status === 401) return 'the API refused the token (401)';
  if (error instanceof TesseraApiError) return error.message;
  if (error instanceof RunWaitTimeout) return error.message.replace(/^run \S+ /, 'it ');
  if (error instanceof TypeError && error.message === 'fetch failed') {
    return `the API could not be reached (${String((error.cause as Error | undefined)?.message ?? error.cause)})`;
  }
  return undefined;
};

/**
 * What a person needs when waiting for an accepted run stopped: the run id, why, and what to do
 * (`tessera runs watch` follows it again, `tessera runs show` shows it as it is now, with the
 * same `--api` for a deployed stack). A local cloud keeps every run in memory (README, "The local
 * cloud keeps no data"), so after it stops or restarts the run is gone and its token is no longer
 * valid.
 *
 * @example
 * lostRunMessage({ runId, apiUrl, local: true }, 'the API could not be reached (connect ECONNREFUSED 127.0.0.1:7700)')
 */
export const lostRunMessage = (run: { runId: string; apiUrl: string; local: boolean }, why: string): string => {
  const api = run.local ? '' : ` --api ${run.apiUrl.replace(/\/$/, '')}`;
  return [
    `tessera: stopped waiting for run ${run.runId}: ${why}.`,
    `  The run was accepted; it may still be running. To follow it: tessera runs watch ${run.runId}${api}`,
    `  (as it is now: tessera runs show ${run.runId}${api}).`,
    ...(run.local
      ? [
          '  The local cloud keeps runs in memory: if it was stopped or restarted, this run is gone (and a new token is in .tessera/local.json); run the request again.',
        ]
      : []),
  ].join('\n');
};

/**
 * The run with every subtask: a large run's resource carries only the first page of them
 * (`subtasksPage`), so the rest are read page by page, and shown round by round (each round in id
 * order, the order pages come in).
 */
export const withEverySubtask = async (client: TesseraClient, run: RunResource): Promise<RunResource> => {
  if (run.subtasksPage === undefined) return run;
  const subtasks: SubtaskView[] = run.subtasksPage.next === undefined ? [...run.subtasks] : [];
  if (run.subtasksPage.next !== undefined) for await (const subtask of client.allSubtasks(run.runId)) subtasks.push(subtask);
  return { ...run, subtasks: subtasks.sort((a, b) => a.round - b.round) };
};

/** Where a submitted run is reported: its API, for the messages that name the run. */
export interface ReportOptions {
  readonly json: boolean;
  readonly idempotencyKey?: string;
  readonly apiUrl: string;
  /** A local cloud, whose runs live in memory and end with it. */
  readonly local: boolean;
  /** `--require-complete`: a succeeded run whose answer is not complete exits `RUN_EXIT.incomplete`. */
  readonly requireComplete?: boolean;
}

/** The request's questions, to name each missing one by its text; none when the file has no valid list. */
const questionsOf = (body: unknown): RequestQuestion[] => {
  const parsed = z.object({ questions: z.array(z.object({ id: z.string(), text: z.string().optional() })) }).safeParse(body);
  return parsed.success ? parsed.data.questions : [];
};

/** The exit code of a run that ended. */
const exitOf = (run: RunResource, requireComplete: boolean): number => {
  if (run.status !== 'succeeded') return RUN_EXIT.notSucceeded;
  return requireComplete && run.answer?.coverage.complete !== true ? RUN_EXIT.incomplete : RUN_EXIT.succeeded;
};

/**
 * Submits a run request, shows progress while it runs, and prints the run: the answer, its
 * coverage statement and every subtask (a large run's read page by page), or with `json` exactly
 * the run resource `GET /runs/{runId}` returns. Once the
 * run is accepted, every way waiting can fail prints the run id and what to do (exit 1).
 *
 * @example
 * const code = await submitAndReport(io, client, body, { json: false, apiUrl, local: true });
 */
export const submitAndReport = async (io: CliIo, client: TesseraClient, body: unknown, options: ReportOptions): Promise<number> => {
  let runId: string;
  let warnings: readonly PlanWarning[];
  try {
    ({ runId, warnings } = await tracePhase('run.submit', () =>
      client.createRun(body as never, options.idempotencyKey ? { idempotencyKey: options.idempotencyKey } : {}),
    ));
  } catch (error) {
    if (!(error instanceof TesseraApiError)) throw error;
    const issues = error.issues.map((issue) => ({ ...issue, code: issue.code as 'invalid_request' }));
    io.err(issues.length > 0 ? formatProblems(`the run request was rejected (${error.status})`, issues) : printable(error.message));
    return RUN_EXIT.requestError;
  }
  io.err(printable(`run ${runId} accepted`));
  for (const line of formatWarnings(warnings)) io.err(printable(line));
  return followAndReport(io, client, runId, { ...options, questions: questionsOf(body) });
};

/** How {@link followAndReport} reports: as {@link ReportOptions}, with the request's questions when known. */
export interface FollowOptions extends Omit<ReportOptions, 'idempotencyKey'> {
  /** The request's questions, to name each missing one by its text. @default - none: missing questions by id */
  readonly questions?: readonly RequestQuestion[];
}

/**
 * Follows an accepted run to its end with live progress on stderr, then prints it as
 * {@link submitAndReport} does and resolves to the same exit code. `tessera run` calls it once it
 * submitted a run; `tessera runs watch ID` calls it for a run submitted earlier.
 *
 * @example
 * const code = await followAndReport(io, client, runId, { json: false, apiUrl, local: false });
 */
export const followAndReport = async (io: CliIo, client: TesseraClient, runId: string, options: FollowOptions): Promise<number> => {
  const progress = progressPrinter(io);
  let run: RunResource;
  try {
    run = await tracePhase('run.wait', () => client.waitForRun(runId, { onProgress: (r) => progress.update(r) }));
  } catch (error) {
    progress.done();
    const why = waitFailure(error);
    io.err(lostRunMessage({ runId, apiUrl: options.apiUrl, local: options.local }, why ?? `${(error as Error).name ?? 'Error'}: ${(error as Error).message}`));
    if (why === undefined) throw error;
    return RUN_EXIT.requestError;
  }
  progress.done();
  io.out(options.json ? JSON.stringify(run, null, 2) : formatRun(await withEverySubtask(client, run), options.questions ?? []));
  return exitOf(run, options.requireComplete ?? false);
};

/**
 * Starts the local cloud in this process (what `tessera run` does when none is running), running
 * the worker module `--workers` names (else package.json's).
 */
export type StartLocal = (io: CliIo, options: { workers?: string }) => Promise<RunTarget>;

const resolveTarget = async (values: ApiFlags & { workers?: string | undefined }, io: CliIo, startLocal: StartLocal): Promise<RunTarget> => {
  const target = await resolveApiTarget('run', USAGE, values, io);
  if (target !== undefined) return target;
  return startLocal(io, values.workers === undefined ? {} : { workers: values.workers });
};

/**
 * `tessera run FILE`: runs a request against the local cloud (started in this process when
 * none is running) or, with `--api`, against a deployed stack. Exit 0 when the run succeeded,
 * 2 when it failed or was cancelled (its coverage is still printed), 1 on a usage or request error;
 * with `--require-complete`, 3 when it succeeded with an incomplete answer.
 *
 * @example
 * await createRunCommand({ startLocal }).run(['examples/tax-2025.json'], processIo());
 */
export const createRunCommand = (options: { startLocal: StartLocal }): Command => ({
  ...COMMAND_HELP.run,
  run: async (args, io) => {
    const parsed = fileArgs('run', USAGE, args, { flags: ['json', 'require-complete'], options: [...Object.keys(API_OPTIONS), 'idempotency-key', 'workers'] });
    const body = await readJson(io, parsed.file);
    const target = await resolveTarget(Object.fromEntries(parsed.values), io, options.startLocal);
    try {
      const client = createTesseraClient({ apiUrl: target.apiUrl, token: target.token });
      const key = parsed.values.get('idempotency-key');
      const report = { json: parsed.flags.has('json'), requireComplete: parsed.flags.has('require-complete'), apiUrl: target.apiUrl, local: target.local };
      return await submitAndReport(io, client, body, { ...report, ...(key ? { idempotencyKey: key } : {}) });
    } finally {
      if (target.stop) await tracePhase('cloud.stop', () => target.stop?.());
    }
  },
});
