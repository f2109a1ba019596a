import { parseArgs } from 'node:util';
import { createTesseraClient, TesseraApiError, type TesseraClient } from '../client';
import { API_OPTIONS, resolveApiTarget, type ApiTarget } from './api-target';
import { UsageError } from './errors';
import { COMMAND_HELP } from './help';
import { printable } from './output';
import { followAndReport, RUN_EXIT, withEverySubtask } from './run';
import { formatRun, progressLine } from './run-output';
import type { CliIo } from './router';

const USAGE = COMMAND_HELP.runs.usage;

/** What `tessera runs ACTION ID` does with the run. */
export const RUN_ACTIONS = ['show', 'watch', 'cancel'] as const;
export type RunAction = (typeof RUN_ACTIONS)[number];

/** Whether the first argument of `tessera runs` names an action on one run. */
export const isRunAction = (word: string | undefined): word is RunAction => RUN_ACTIONS.some((action) => action === word);

interface ActionArgs {
  readonly runId: string;
  readonly json: boolean;
  readonly requireComplete: boolean;
  readonly target: ApiTarget;
}

const parse = async (action: RunAction, args: readonly string[], io: CliIo): Promise<ActionArgs | undefined> => {
  const command = `runs ${action}`;
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      options: { ...API_OPTIONS, json: { type: 'boolean' }, ...(action === 'watch' ? { 'require-complete': { type: 'boolean' } } : {}) },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError(command, error instanceof Error ? error.message : String(error), USAGE, { cause: error });
  }
  const [runId, ...extra] = parsed.positionals;
  if (runId === undefined || extra.length > 0) throw new UsageError(command, `expected one run ID (got ${parsed.positionals.length})`, USAGE);
  const target = await resolveApiTarget(command, USAGE, parsed.values, io);
  if (target === undefined) {
    io.err(`tessera ${command}: no local cloud is running (start one with npm start), and no --api or TESSERA_API_URL was given.`);
    return undefined;
  }
  return { runId, json: parsed.values.json === true, requireComplete: parsed.values['require-complete'] === true, target };
};

/** `tessera runs show ID`: the run as it is now, as `tessera run` prints an ended one, with its progress while it runs. */
const show = async (io: CliIo, client: TesseraClient, args: ActionArgs): Promise<number> => {
  const run = await client.getRun(args.runId);
  if (args.json) {
    io.out(JSON.stringify(run, null, 2));
    return 0;
  }
  io.out(formatRun(await withEverySubtask(client, run)));
  if (run.status === 'running') io.out(`Progress  ${progressLine(run)}`);
  return 0;
};

/** `tessera runs cancel ID`: cancels the run; its answer, with coverage, follows when its execution has wound down. */
const cancel = async (io: CliIo, client: TesseraClient, args: ActionArgs): Promise<number> => {
  const run = await client.cancelRun(args.runId);
  if (args.json) {
    io.out(JSON.stringify(run, null, 2));
    return 0;
  }
  const ended = Object.entries(run.progress.byState)
    .filter(([state, count]) => state !== 'pending' && state !== 'running' && count > 0)
    .map(([state, count]) => `${state} ${count}`)
    .join(', ');
  io.out(printable(`Run ${run.runId} ${run.status}${ended ? ` (${ended})` : ''}`));
  io.err(printable(`Its answer, with coverage, follows when the run has wound down: tessera runs watch ${run.runId}`));
  return 0;
};

/**
 * `tessera runs show|watch|cancel ID`: one run by its id, on the API `--api` or
 * `TESSERA_API_URL` names, else on the running local cloud. `watch` follows the run with the same
 * progress and answer as `tessera run`, and exits as it does (0, 2, 3; 1 when waiting failed);
 * `show` and `cancel` exit 0, or 1 when the API refused the call (404: no such run in the
 * caller's tenant; 409: the run to cancel had already ended).
 *
 * @example
 * await runAction('watch', ['3d49…', '--require-complete'], processIo()); // 0 when it succeeded complete
 */
export const runAction = async (action: RunAction, args: readonly string[], io: CliIo): Promise<number> => {
  const parsed = await parse(action, args, io);
  if (parsed === undefined) return RUN_EXIT.requestError;
  const { target } = parsed;
  const client = createTesseraClient({ apiUrl: target.apiUrl, token: target.token });
  try {
    switch (action) {
      case 'show':
        return await show(io, client, parsed);
      case 'cancel':
        return await cancel(io, client, parsed);
      case 'watch':
        return await followAndReport(io, client, parsed.runId, {
          json: parsed.json,
          requireComplete: parsed.requireComplete,
          apiUrl: target.apiUrl,
          local: target.local,
        });
      default: {
        const unknown: never = action;
        throw new Error(`unknown run action ${String(unknown)}`);
      }
    }
  } catch (error) {
    if (!(error instanceof TesseraApiError)) throw error;
    io.err(printable(`tessera runs ${action}: ${error.message}`));
    return RUN_EXIT.requestError;
  }
};
