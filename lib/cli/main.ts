import { referenceCatalog } from '../workers/reference';
import { createInitCommand } from './init';
import { createPlanCommand } from './plan';
import { startLocalForRun } from './local';
import { reconcileCommand } from './reconcile';
import { createRunCommand } from './run';
import { serveCommand } from './serve';
import { processIo, runCli, type CliIo, type CommandTable } from './router';

/**
 * Every `tessera` command. Add a command by writing it as its own module (a `Command`) and
 * registering it here.
 */
export const commands: CommandTable = {
  init: createInitCommand(),
  plan: createPlanCommand({ catalog: referenceCatalog }),
  reconcile: reconcileCommand,
  run: createRunCommand({ startLocal: startLocalForRun }),
  serve: serveCommand,
};

/**
 * The `tessera` entry point: bin/tessera.mjs calls it with `process.argv.slice(2)`.
 *
 * @example
 * process.exitCode = await main(['plan', 'examples/tax.json']);
 */
export const main = (argv: readonly string[], io: CliIo = processIo()): Promise<number> => runCli(argv, commands, io);
