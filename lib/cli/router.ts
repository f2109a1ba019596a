import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { TesseraApiError } from '../client/errors';
import { LocalCloudError } from '../local/errors';
import { InputFileError, UsageError } from './errors';
import { WorkerModuleError } from '../workers/errors';

/** Where a command reads and writes; tests pass their own. */
export interface CliIo {
  /** One line (or block) of the command's result, to stdout. */
  out(text: string): void;
  /** One line of diagnostics, to stderr. */
  err(text: string): void;
  /** The text of a file; `-` is standard input. */
  readText(path: string): Promise<string>;
}

/** One `tessera` subcommand. Commands register in the table of lib/cli/main.ts. */
export interface Command {
  /** One line for the command list. */
  readonly summary: string;
  /** `tessera plan FILE [--json]`. */
  readonly usage: string;
  /** More for `--help`, after the summary: what the flags do, the exit codes. */
  readonly details?: string;
  /** Runs with the arguments after the command name; resolves to the exit code. */
  run(args: readonly string[], io: CliIo): Promise<number>;
}

export type CommandTable = Readonly<Record<string, Command>>;

const readStdin = async (): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString('utf8');
};

/** The real process: stdout, stderr and the file system. @example await runCli(argv, commands, processIo()) */
export const processIo = (): CliIo => ({
  out: (text) => void process.stdout.write(`${text}\n`),
  err: (text) => void process.stderr.write(`${text}\n`),
  readText: (path) => (path === '-' ? readStdin() : readFile(path, 'utf8')),
});

/**
 * Usage text listing every registered command.
 *
 * @example
 * usage({ plan, reconcile }) // 'usage: tessera <command> …\n\ncommands:\n  plan  …'
 */
export const usage = (commands: CommandTable): string => {
  const names = Object.keys(commands);
  const width = Math.max(0, ...names.map((n) => n.length));
  const lines = names.map((name) => `  ${name.padEnd(width)}  ${commands[name]?.summary ?? ''}`);
  return [
    'usage: tessera <command> [options]',
    '',
    'commands:',
    ...lines,
    '',
    'Run tessera <command> --help for its options, exit statuses and environment; tessera --version prints the version.',
  ].join('\n');
};

/** Parsed arguments of a command that takes one FILE and boolean flags. */
export interface FileArgs {
  readonly file: string;
  readonly flags: ReadonlySet<string>;
  readonly values: ReadonlyMap<string, string>;
}

/**
 * Parses `FILE [--flag…] [--option value…]` strictly; a wrong call is a `UsageError`.
 *
 * @example
 * fileArgs('plan', 'tessera plan FILE [--json]', ['run.json', '--json'], { flags: ['json'] })
 * // { file: 'run.json', flags: Set { 'json' }, values: Map {} }
 */
export const fileArgs = (
  command: string,
  text: string,
  args: readonly string[],
  spec: { readonly flags?: readonly string[]; readonly options?: readonly string[] },
): FileArgs => {
  const options = Object.fromEntries([
    ...(spec.flags ?? []).map((name) => [name, { type: 'boolean' as const }]),
    ...(spec.options ?? []).map((name) => [name, { type: 'string' as const }]),
  ]);
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(command, error instanceof Error ? error.message : String(error), text, { cause: error });
  }
  const [file, ...extra] = parsed.positionals;
  if (file === undefined || extra.length > 0) throw new UsageError(command, `expected one FILE (got ${parsed.positionals.length})`, text);
  const entries = Object.entries(parsed.values);
  return {
    file,
    flags: new Set(entries.filter(([, v]) => v === true).map(([k]) => k)),
    values: new Map(entries.flatMap(([k, v]) => (typeof v === 'string' ? [[k, v] as const] : []))),
  };
};

/**
 * Reads a JSON file into an unknown value for a zod schema to parse.
 *
 * @example
 * const body = await readJson(io, 'run.json');
 */
export const readJson = async (io: CliIo, file: string): Promise<unknown> => {
  let text: string;
  try {
    text = await io.readText(file);
  } catch (error) {
    throw new InputFileError(file, `cannot be read: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  try {
    const value: unknown = JSON.parse(text);
    return value;
  } catch (error) {
    throw new InputFileError(file, `is not valid JSON: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
};

const HELP = new Set(['help', '--help', '-h']);
const VERSION = new Set(['--version', '-v']);

/** What the router knows beyond its commands. */
export interface CliInfo {
  /** The line `tessera --version` prints. @default - no `--version`: it is an unknown command */
  readonly version?: () => string;
}

/**
 * A small command router: `tessera <command> …` runs the command from the table; no command
 * or `--help` prints the usage (exit 1 and 0), `--version` the version line (exit 0), an unknown
 * command prints the usage to stderr (exit 1). `UsageError` and `InputFileError` end a command
 * with exit 1 and their message.
 *
 * @example
 * process.exitCode = await runCli(process.argv.slice(2), { plan, reconcile }, processIo());
 */
export const runCli = async (argv: readonly string[], commands: CommandTable, io: CliIo, info: CliInfo = {}): Promise<number> => {
  const [name, ...args] = argv;
  if (name === undefined) {
    io.err(usage(commands));
    return 1;
  }
  if (HELP.has(name)) {
    io.out(usage(commands));
    return 0;
  }
  if (info.version !== undefined && VERSION.has(name)) {
    io.out(info.version());
    return 0;
  }
  const command = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!command) {
    io.err(`tessera: unknown command ${name}\n\n${usage(commands)}`);
    return 1;
  }
  if (args.some((a) => HELP.has(a))) {
    io.out(`usage: ${command.usage}\n\n${command.summary}${command.details ? `\n\n${command.details}` : ''}`);
    return 0;
  }
  try {
    return await command.run(args, io);
  } catch (error) {
    const message = describeFailure(error);
    if (message === undefined) throw error;
    io.err(message);
    return 1;
  }
};

/**
 * The one line a person needs for a failure that is theirs to fix (a usage error, a missing
 * Java, a port in use, an API that refused the call); `undefined` for a bug, which propagates
 * with its stack.
 *
 * @example
 * describeFailure(new JavaMissingError(undefined)) // 'tessera: DynamoDB Local needs Java 17 or newer, …'
 */
export const describeFailure = (error: unknown): string | undefined => {
  if (error instanceof UsageError || error instanceof InputFileError || error instanceof LocalCloudError || error instanceof TesseraApiError) {
    return error.message;
  }
  if (error instanceof WorkerModuleError) return `tessera: ${error.message}`;
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code === 'EADDRINUSE') return `tessera: ${(error as Error).message}; another process uses that port (pick one with --port)`;
  if (error instanceof TypeError && error.message === 'fetch failed') {
    return `tessera: the API could not be reached (${String((error.cause as Error | undefined)?.message ?? error.cause)})`;
  }
  return undefined;
};
