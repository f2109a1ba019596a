import { parseArgs } from 'node:util';
import { createTesseraClient, TesseraApiError } from '../client';
import { API_OPTIONS, resolveApiTarget } from './api-target';
import { RunStatus, type RunSummary } from '../contract';
import { UsageError } from './errors';
import { printable } from './output';
import { isRunAction, runAction } from './run-by-id';
import type { CliIo, Command } from './router';
import { COMMAND_HELP } from './help';

const USAGE = COMMAND_HELP.runs.usage;

/** Runs listed when `--limit` is not given. */
const DEFAULT_LIMIT = 20;
/** The API's largest page. */
const PAGE = 100;

const usageError = (problem: string, cause?: unknown): UsageError => new UsageError('runs', problem, USAGE, cause === undefined ? {} : { cause });

/**
 * One line per run: id, status, creation time, subtasks ended of dispatched, coverage, goal.
 *
 * @example
 * runLine(summary) // '3d49…  succeeded  2025-06-01T12:00:00Z  5/5  complete    Total deductible…'
 */
export const runLine = (run: RunSummary): string => {
  const coverage = run.complete === null ? '-' : run.complete ? 'complete' : 'incomplete';
  const goal = run.goal.length > 60 ? `${run.goal.slice(0, 59)}…` : run.goal;
  return [
    run.runId,
    run.status.padEnd(9),
    run.createdAt,
    `${run.progress.terminal}/${run.progress.dispatched}`.padStart(7),
    coverage.padEnd(10),
    printable(goal),
  ].join('  ');
};

const parse = (args: readonly string[]) => {
  try {
    return parseArgs({
      args: [...args],
      options: { json: { type: 'boolean' }, status: { type: 'string' }, limit: { type: 'string' }, ...API_OPTIONS },
      allowPositionals: false,
      strict: true,
    }).values;
  } catch (error) {
    throw usageError(error instanceof Error ? error.message : String(error), error);
  }
};

/**
 * `tessera runs`: the tenant's runs, newest first, from `GET /runs` of the API `--api` or
 * `TESSERA_API_URL` names (with a token from `--token-file`, `TESSERA_TOKEN` or `--token`), else
 * of the running local cloud. `--limit N` lists the N newest (default 20), following pages as
 * needed; `--json` prints them as one JSON array of run summaries.
 */
const listRuns = async (args: readonly string[], io: CliIo): Promise<number> => {
  const values = parse(args);
  const status = values.status === undefined ? undefined : RunStatus.safeParse(values.status);
  if (status !== undefined && !status.success) throw usageError(`--status must be one of ${RunStatus.options.join(', ')}`);
  const limit = values.limit === undefined ? DEFAULT_LIMIT : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1) throw usageError('--limit must be a whole number of at least 1');
  const target = await resolveApiTarget('runs', USAGE, values, io);
  if (target === undefined) {
    io.err('tessera runs: no local cloud is running (start one with npm start), and no --api or TESSERA_API_URL was given.');
    return 1;
  }
  const client = createTesseraClient(target);
  const runs: RunSummary[] = [];
  try {
    for await (const run of client.allRuns({ ...(status?.data === undefined ? {} : { status: status.data }), limit: Math.min(limit, PAGE) })) {
      runs.push(run);
      if (runs.length >= limit) break;
    }
  } catch (error) {
    if (!(error instanceof TesseraApiError)) throw error;
    io.err(printable(`tessera runs: ${error.message}`));
    return 1;
  }
  if (values.json) io.out(JSON.stringify(runs, null, 2));
  else if (runs.length === 0) io.out('no runs');
  else for (const run of runs) io.out(runLine(run));
  return 0;
};

/**
 * `tessera runs`: lists the tenant's runs; `tessera runs show|watch|cancel ID` acts on one
 * (lib/cli/run-by-id.ts).
 *
 * @example
 * await runsCommand.run(['--status', 'running', '--json'], processIo());
 * await runsCommand.run(['watch', runId], processIo());
 */
export const runsCommand: Command = {
  ...COMMAND_HELP.runs,
  run: async (args, io: CliIo) => {
    const [first, ...rest] = args;
    return isRunAction(first) ? runAction(first, rest, io) : listRuns(args, io);
  },
};
