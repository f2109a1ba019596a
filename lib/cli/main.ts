import { COMMAND_HELP } from './help';
import { processIo, runCli, type CliIo, type Command, type CommandTable } from './router';
import { recordPhase } from '../local/startup-trace';
import { versionLine } from './version';

/**
 * A command whose module is imported only when it runs: its help comes from COMMAND_HELP, so
 * listing the commands or `tessera run --help` loads none of them, and `tessera run` does not pay
 * for the imports of the other commands (the model settings of `plan`, the local cloud of `serve`).
 */
const onDemand = (help: Pick<Command, 'summary' | 'usage' | 'details'>, load: () => Promise<Command>): Command => ({
  ...help,
  run: async (args, io) => {
    const command = await load();
    // From the process start to here: Node, tsx, the CLI and the modules of the command that runs.
    recordPhase('cli.imports', 0);
    return command.run(args, io);
  },
});

/**
 * The models `tessera plan` allows: those of the model variables in the environment
 * (docs/workers.md), as a deployment's workers read them; the offline model alone when they are
 * unset or malformed (the local cloud's workers run offline). The model settings alone, not the
 * whole worker SDK (its Bedrock adapter, sources, tool loop).
 */
const planModels = async (env: NodeJS.ProcessEnv): Promise<string[]> => {
  const { allowedModelIds, ModelEnvironment } = await import('../workers/models/config');
  const config = ModelEnvironment.safeParse(env);
  return allowedModelIds(config.success ? config.data : ModelEnvironment.parse({}));
};

/**
 * Every `tessera` command. Add a command by writing it as its own module (a `Command`), giving
 * it an entry in COMMAND_HELP (lib/cli/help.ts) and registering it here.
 */
export const commands: CommandTable = {
  plan: onDemand(COMMAND_HELP.plan, async () => (await import('./plan')).createPlanCommand({ models: await planModels(process.env) })),
  init: onDemand(COMMAND_HELP.init, async () => (await import('./init')).createInitCommand()),
  reconcile: onDemand(COMMAND_HELP.reconcile, async () => (await import('./reconcile')).reconcileCommand),
  // The local cloud's start is imported only when no cloud is running: a warm run never loads it.
  run: onDemand(COMMAND_HELP.run, async () =>
    (await import('./run')).createRunCommand({ startLocal: async (io, options) => (await import('./local')).startLocalForRun(io, options) }),
  ),
  runs: onDemand(COMMAND_HELP.runs, async () => (await import('./runs')).runsCommand),
  mcp: onDemand(COMMAND_HELP.mcp, async () => (await import('./mcp')).createMcpCommand({ models: await planModels(process.env) })),
  serve: onDemand(COMMAND_HELP.serve, async () => (await import('./serve')).serveCommand),
};

/**
 * The `tessera` entry point: bin/tessera.mjs calls it with `process.argv.slice(2)`.
 *
 * @example
 * process.exitCode = await main(['plan', 'examples/tax.json']);
 * await main(['--version']); // prints '@tessera-fanout/tessera 0.1.0'
 */
export const main = (argv: readonly string[], io: CliIo = processIo()): Promise<number> => runCli(argv, commands, io, { version: versionLine });
