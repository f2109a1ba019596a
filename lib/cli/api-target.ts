import { z } from 'zod';
import { API_ENV } from './api-env';
import { InputFileError, UsageError } from './errors';
import { readLocalState } from './local-state';
import type { CliIo } from './router';

/** The `parseArgs` options of every command that calls the API. */
export const API_OPTIONS = {
  api: { type: 'string' },
  token: { type: 'string' },
  'token-file': { type: 'string' },
} as const;

/** Where a command's requests go. */
export interface ApiTarget {
  readonly apiUrl: string;
  readonly token: string;
  /** A local cloud, whose runs live in memory and end with it. */
  readonly local: boolean;
  /** The API in words, for messages. */
  readonly description: string;
}

/** The API flags a command was given (`parseArgs` values). */
export interface ApiFlags {
  readonly api?: string | undefined;
  readonly token?: string | undefined;
  readonly 'token-file'?: string | undefined;
}

/** Why `--token` is discouraged, printed on stderr whenever it is used. */
export const TOKEN_FLAG_WARNING =
  `tessera: warning: a token given with --token is visible to other users of this machine (ps, /proc); ` + `use --token-file PATH or ${API_ENV.token} instead`;

const HttpUrl = z.url({ protocol: /^https?$/ });

/** The API URL, from `--api` or else `TESSERA_API_URL`, checked and named by where it came from. */
const apiUrlOf = (command: string, usage: string, flags: ApiFlags, env: NodeJS.ProcessEnv): string | undefined => {
  const [source, value] = flags.api !== undefined ? ['--api', flags.api] : [API_ENV.apiUrl, env[API_ENV.apiUrl] || undefined];
  if (value === undefined) return undefined;
  if (!HttpUrl.safeParse(value).success) throw new UsageError(command, `${source} must be an http:// or https:// URL (got ${JSON.stringify(value)})`, usage);
  return value;
};

/**
 * The token the caller gave, from (in this order) `--token`, `--token-file`, `TESSERA_TOKEN`;
 * `undefined` when none. A token file is read whole and trimmed (a trailing newline is not part of
 * the JWT); `-` reads standard input.
 */
const givenToken = async (command: string, usage: string, flags: ApiFlags, env: NodeJS.ProcessEnv, io: CliIo): Promise<string | undefined> => {
  const file = flags['token-file'];
  if (flags.token !== undefined && file !== undefined) throw new UsageError(command, 'give --token or --token-file, not both', usage);
  if (flags.token !== undefined) {
    io.err(TOKEN_FLAG_WARNING);
    if (flags.token === '') throw new UsageError(command, '--token is empty', usage);
    return flags.token;
  }
  if (file !== undefined) {
    let text: string;
    try {
      text = await io.readText(file);
    } catch (error) {
      throw new InputFileError(file, `(--token-file) cannot be read: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    const token = text.trim();
    if (token === '') throw new InputFileError(file, '(--token-file) is empty');
    return token;
  }
  return env[API_ENV.token] || undefined;
};

/**
 * Where a command that calls the API sends its requests: `--api URL`, else `TESSERA_API_URL`,
 * with a token the caller gives (`--token`, `--token-file` or `TESSERA_TOKEN`, which an API
 * URL requires); else the local cloud that `tessera serve` runs in this project, with the token
 * given or else its demo token; else `undefined` (no API, and no local cloud running).
 *
 * @example
 * const target = await resolveApiTarget('runs', USAGE, { api: 'https://api.example.com' }, io); // token from TESSERA_TOKEN
 */
export const resolveApiTarget = async (
  command: string,
  usage: string,
  flags: ApiFlags,
  io: CliIo,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ApiTarget | undefined> => {
  const apiUrl = apiUrlOf(command, usage, flags, env);
  const token = await givenToken(command, usage, flags, env, io);
  if (apiUrl !== undefined) {
    const source = flags.api !== undefined ? '--api' : API_ENV.apiUrl;
    if (token === undefined) throw new UsageError(command, `${source} needs a token: pass --token-file PATH or set ${API_ENV.token}`, usage);
    return { apiUrl, token, local: false, description: apiUrl };
  }
  const running = await readLocalState();
  if (running === undefined) return undefined;
  return { apiUrl: running.apiUrl, token: token ?? running.token, local: true, description: `the local cloud at ${running.apiUrl}` };
};
