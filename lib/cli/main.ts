// The model settings alone, not the whole worker SDK (its Bedrock adapter, sources, tool loop): a
// warm `tessera run` only submits to a running cloud, and pays for every module imported here.
import { allowedModelIds, ModelEnvironment } from '../workers/models/config';
import { createInitCommand } from './init';
import { createPlanCommand } from './plan';
import { startLocalForRun } from './local';
import { reconcileCommand } from './reconcile';
import { createRunCommand } from './run';
import { runsCommand } from './runs';
import { serveCommand } from './serve';
import { processIo, runCli, type CliIo, type CommandTable } from './router';
import { recordPhase } from '../local/startup-trace';

/**
 * The models `tessera plan` allows: those of the model variables in the environment
 * (docs/workers.md), as a deployment's workers read them; the offline model alone when they are
 * unset or malformed (the local cloud's workers run offline).
 */
const planModels = (env: NodeJS.ProcessEnv): string[] => {
  const config = ModelEnvironment.safeParse(env);
  return allowedModelIds(config.success ? config.data : ModelEnvironment.parse({}));
};

/**
 * Every `tessera` command. Add a command by writing it as its own module (a `Command`) and
 * registering it here.
 */
export const commands: CommandTable = {
  plan: createPlanCommand({ models: planModels(process.env) }),
  init: createInitCommand(),
  reconcile: reconcileCommand,
  run: createRunCommand({ startLocal: startLocalForRun }),
  runs: runsCommand,
  serve: serveCommand,
};

/**
 * The `tessera` entry point: bin/tessera.mjs calls it with `process.argv.slice(2)`.
 *
 * @example
 * process.exitCode = await main(['plan', 'examples/tax.json']);
 */
export const main = (argv: readonly string[], io: CliIo = processIo()): Promise<number> => {
  // From the process start to here: Node, tsx and every module the CLI imports.
  recordPhase('cli.imports', 0);
  return runCli(argv, commands, io);
};
