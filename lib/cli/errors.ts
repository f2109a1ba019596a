/**
 * Errors of the `tessera` command line. Each one ends the command with exit code 1 and its
 * message on stderr; anything else is a bug and propagates.
 */

/**
 * Base of the command line's errors; the CLI's entry point prints any of them and exits with 1.
 *
 * @example
 * catch (error) { if (error instanceof CliError) { process.stderr.write(`${error.message}\n`); process.exitCode = 1; } }
 */
export class CliError extends Error {
  override readonly name: string = 'CliError';
}

/**
 * The command was called wrongly: a missing FILE, an unknown flag.
 *
 * @example
 * throw new UsageError('plan', 'expected one FILE', 'tessera plan FILE [--json]');
 */
export class UsageError extends CliError {
  override readonly name = 'UsageError';
  constructor(
    readonly command: string,
    problem: string,
    readonly usage: string,
    options?: ErrorOptions,
  ) {
    super(`tessera ${command}: ${problem}\nusage: ${usage}`, options);
  }
}

/**
 * The input file could not be read or is not JSON.
 *
 * @example
 * throw new InputFileError('run.json', 'is not valid JSON', { cause: error });
 */
export class InputFileError extends CliError {
  override readonly name = 'InputFileError';
  constructor(
    readonly file: string,
    problem: string,
    options?: ErrorOptions,
  ) {
    super(`${file} ${problem}`, options);
  }
}
