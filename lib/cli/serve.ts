import { parseArgs } from 'node:util';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { projectDirectory } from '../local/local-cache';
import { createTesseraClient } from '../client';
import { loopbackOrigin } from '../local/loopback-dns';
import { viewerUrl } from '../local/viewer-site';
import { UsageError } from './errors';
import { DEMO_TENANT, startLocalSession, stopOnSignals } from './local';
import { LOCAL_STATE_FILE, removeLocalState, writeLocalState } from './local-state';
import { readJson, type CliIo, type Command } from './router';
import { submitAndReport } from './run';
import { workerModulePath } from './workers';
import { COMMAND_HELP } from './help';

const USAGE = COMMAND_HELP.serve.usage;
const DEFAULT_API_PORT = 7700;

const port = (name: string, value: string | undefined): number | undefined => {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new UsageError('serve', `--${name} must be a port number (got ${value})`, USAGE);
  return n;
};

const OPTIONS = {
  port: { type: 'string' },
  run: { type: 'string' },
  workers: { type: 'string' },
  'lambda-port': { type: 'string' },
  'sfn-port': { type: 'string' },
  'dynamodb-port': { type: 'string' },
  'sqs-port': { type: 'string' },
  verbose: { type: 'boolean' },
} as const;

const parseServeArgs = (args: readonly string[]) => {
  try {
    return parseArgs({ args: [...args], options: OPTIONS, strict: true }).values;
  } catch (error) {
    throw new UsageError('serve', (error as Error).message, USAGE, { cause: error });
  }
};

/**
 * The local cloud keeps no data across restarts, and says so. DynamoDB Local could persist its
 * tables, but SQS messages, Step Functions executions, task tokens and the token-signing key live
 * in this process: after a restart every persisted run would have lost its execution and could
 * only be closed as failed. Starting empty is the honest state.
 */
export const LOCAL_DATA_NOTICE = 'Runs are kept in memory: stopping or restarting the local cloud forgets every run and issues a new token.';

/** Where a project keeps its run requests: the starter's `requests/`, this repository's `examples/`. */
const REQUEST_DIRECTORIES = ['requests', 'examples'] as const;

/**
 * The project's own run requests, to suggest in the banner: the `.json` files of its `requests/`,
 * else of its `examples/` directory, sorted, relative to `cwd`.
 *
 * @example
 * projectRequests('/home/me/my-project') // ['requests/todo-review-skip-vendor.json', 'requests/todo-review.json']
 */
export const projectRequests = (project: string = projectDirectory(), cwd: string = process.cwd()): string[] => {
  for (const name of REQUEST_DIRECTORIES) {
    const dir = join(project, name);
    if (!existsSync(dir)) continue;
    const files = readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isFile() && entry.name.endsWith('.json'));
    if (files.length > 0) return files.map((entry) => relative(cwd, join(dir, entry.name))).sort();
  }
  return [];
};

/**
 * What `serve` prints once the cloud is up; with a token, first the viewer's address (the token
 * rides in the URL fragment, which the browser never sends to a server). The commands it suggests
 * run `requests`, the project's own (`projectRequests`), or a placeholder path when it has none.
 *
 * @example banner(apiUrl, { ...cloud.endpoints }, token, projectRequests())
 */
export const banner = (apiUrl: string, endpoints: Record<string, string | undefined>, token?: string, requests: readonly string[] = []): string => {
  const request = requests[0] ?? 'path/to/request.json';
  const folders = [...new Set(requests.map((file) => `${dirname(file)}/`))];
  return [
    'tessera local cloud is running on 127.0.0.1 (Ctrl-C stops everything it started)',
    ...(token === undefined ? [] : [`  Viewer          ${viewerUrl(apiUrl, token)}`]),
    `  API             ${apiUrl}`,
    `  Step Functions  ${endpoints.stepFunctions}`,
    `  Lambda          ${endpoints.lambda}`,
    `  DynamoDB Local  ${endpoints.dynamodb}`,
    `  SQS (fauxqs)    ${endpoints.sqs ? loopbackOrigin(endpoints.sqs) : ''}`,
    '',
    LOCAL_DATA_NOTICE,
    `A token for tenant "${DEMO_TENANT}" (valid 12 h) is in ${relative(process.cwd(), LOCAL_STATE_FILE) || LOCAL_STATE_FILE}.`,
    'Try, in another terminal:',
    `  npx tessera run ${request}`,
    '  npx tessera runs                 # then tessera runs show|watch|cancel RUN_ID',
    `  TOKEN=$(node -p "require('./.tessera/local.json').token")`,
    `  curl -s -X POST ${apiUrl}/runs -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' --data @${request}`,
    ...(folders.length > 0 ? [`Requests: ${folders.join(', ')} (${requests.length} file${requests.length === 1 ? '' : 's'})`] : []),
  ].join('\n');
};

/**
 * `tessera serve` (`npm start`): the local cloud, until Ctrl-C. With `--run FILE` it first runs
 * that request and prints its answer and coverage, then keeps serving.
 *
 * @example
 * await serveCommand.run(['--run', 'examples/tax-2025.json'], processIo());
 */
export const serveCommand: Command = {
  ...COMMAND_HELP.serve,
  run: async (args: readonly string[], io: CliIo) => {
    const values = parseServeArgs(args);
    const ports = {
      api: port('port', values.port) ?? DEFAULT_API_PORT,
      lambda: port('lambda-port', values['lambda-port']),
      stepFunctions: port('sfn-port', values['sfn-port']),
      dynamodb: port('dynamodb-port', values['dynamodb-port']),
      sqs: port('sqs-port', values['sqs-port']),
    };
    const workers = workerModulePath(values.workers);
    const example = values.run;
    const body = example === undefined ? undefined : await readJson(io, example);
    io.err('Starting the local cloud…');
    const { cloud, token } = await startLocalSession(io, { ports, verbose: values.verbose === true, workers });
    const apiUrl = cloud.apiUrl ?? '';
    await writeLocalState({ apiUrl, token, tenant: DEMO_TENANT, pid: process.pid, startedAt: new Date().toISOString() });
    const stopped = new Promise<void>((resolve) => {
      stopOnSignals(async () => {
        io.err('\nStopping the local cloud…');
        await removeLocalState();
        await cloud.stop();
        resolve();
      });
    });
    io.out(banner(apiUrl, { ...cloud.endpoints }, token, projectRequests()));
    if (body !== undefined) {
      io.out(`\nRunning ${example}:`);
      await submitAndReport(io, createTesseraClient({ apiUrl, token }), body, { json: false, apiUrl, local: true });
      io.out('\nThe local cloud is still running. Ctrl-C stops it.');
    }
    await stopped;
    return 0;
  },
};
