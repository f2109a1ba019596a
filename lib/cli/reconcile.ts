import { ReconcileInput } from '../contract';
import { buildCoverage } from '../domain';
import { formatCoverage, printable } from './output';
import { fileArgs, readJson, type Command } from './router';
import { COMMAND_HELP } from './help';

const USAGE = COMMAND_HELP.reconcile.usage;

/**
 * `tessera reconcile FILE`: an offline audit of any run. Reads
 * `{ universe, subtasks, outcomes, sources?, policy?, questions? }` (the contract's
 * `ReconcileInput`), and prints its coverage: the statement and the fields behind it, or the
 * coverage JSON with `--json`. Exit 0 whatever the coverage says; exit 1 only when the file
 * cannot be read or does not match the schema (every issue is printed with its path).
 *
 * @example
 * await reconcileCommand.run(['run-7.json', '--json'], processIo());
 */
export const reconcileCommand: Command = {
  ...COMMAND_HELP.reconcile,
  run: async (args, io) => {
    const parsed = fileArgs('reconcile', USAGE, args, { flags: ['json'] });
    const input = ReconcileInput.safeParse(await readJson(io, parsed.file));
    if (!input.success) {
      io.err(`${parsed.file} is not a reconcile input:`);
      for (const issue of input.error.issues) io.err(printable(`  ${issue.path.join('.') || '(root)'}: ${issue.message}`));
      return 1;
    }
    const { outcomes, ...manifest } = input.data;
    const coverage = buildCoverage(manifest, outcomes);
    io.out(parsed.flags.has('json') ? JSON.stringify(coverage, null, 2) : formatCoverage(manifest.universe, coverage));
    return 0;
  },
};
