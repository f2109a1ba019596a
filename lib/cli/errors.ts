/**
 * Errors of the `tessera` command line. Each one ends the command with exit code 1 and its
 * message on stderr; anything else is a bug and propagates.
 */

/** Options shared by every CLI error. */
export interface CliErrorOptions {
  readonly cause?: unknown;
}

/**
 * The command was called wrongly: a missing FILE, an unknown flag.
 *
 * @example
 * throw new UsageError({ command: 'plan', problem: 'expected one FILE', usage: 'tessera plan FILE [--json]' });
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly command: string;
  readonly usage: string;

  constructor(context: { command: string; problem: string; usage: string }, options: CliErrorOptions = {}) {
    super(`tessera ${context.command}: ${context.problem}\nusage: ${context.usage}`, { cause: options.cause });
    this.command = context.command;
    this.usage = context.usage;
  }
}

/**
 * The input file could not be read or is not JSON.
 *
 * @example
 * throw new InputFileError({ file: 'run.json', problem: 'is not valid JSON' }, { cause: error });
 */
export class InputFileError extends Error {
  override readonly name = 'InputFileError';
  readonly file: string;

  constructor(context: { file: string; problem: string }, options: CliErrorOptions = {}) {
    super(`${context.file} ${context.problem}`, { cause: options.cause });
    this.file = context.file;
  }
}
