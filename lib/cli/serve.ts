import { parseArgs } from 'node:util';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { LocalFanOutProps } from '../infra/fan-out-metadata';
import { InvalidConstructProps } from '../infra/errors';
import { CDK_JSON, projectFanOut, type ProjectFanOut } from '../local/app-fan-out';
import { ProjectAppError } from '../local/errors';
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
  construct: { type: 'string' },
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

/** What the local cloud of `serve` runs: the worker module, and the fan-out's props when the project's app gives them. */
export interface ServeFanOut {
  readonly workers: string;
  readonly fanOut?: LocalFanOutProps;
  /** The project's fan-out as found, for the log line and the error that names its construct. */
  readonly found: ProjectFanOut;
}

/**
 * The one line `serve` prints about the fan-out it runs: the app's construct and the settings
 * taken from it, or why it runs the construct's defaults.
 *
 * @example
 * fanOutLine({ source: 'default', reason: 'no cdk.json in /home/me/app' }, '/home/me/app/src/workers.ts', '/home/me/app')
 * // "No fan-out from a CDK app (no cdk.json in /home/me/app): running TesseraFanOut's defaults with src/workers.ts"
 */
export const fanOutLine = (found: ProjectFanOut, workers: string, cwd: string = process.cwd()): string => {
  const shown = relative(cwd, workers) || workers;
  switch (found.source) {
    case 'default':
      return `No fan-out from a CDK app (${found.reason}): running TesseraFanOut's defaults with ${shown}`;
    case 'app': {
      const { props } = found;
      const kinds = Object.entries(props.kinds)
        .map(([kind, settings]) => `${kind} ×${settings.maxConcurrency}`)
        .join(', ');
      const module = workers === found.workers ? shown : `${shown} (--workers)`;
      return (
        `Fan-out ${found.constructPath} of the CDK app (\`${found.app}\`): ${module}; kinds ${kinds} (max concurrency); ` +
        `worker timeout ${props.workerTimeoutSeconds} s; max deadline ${props.maxDeadlineSeconds} s; batches of ${props.batchSubtasks}`
      );
    }
    default: {
      const unexpected: never = found;
      return unexpected;
    }
  }
};

/**
 * Finds the fan-out `serve` runs (lib/local/app-fan-out.ts): the project's CDK app is synthesized
 * once, here, and its `TesseraFanOut`'s settings and worker module are used (`--workers` still
 * names another module); without an app, or with no fan-out in it, the construct's defaults and
 * the worker module of `--workers` or package.json. Prints one line saying which.
 *
 * @example
 * const { workers, fanOut } = await serveFanOut(io, { project: projectDirectory() });
 */
export const serveFanOut = async (
  io: CliIo,
  options: { readonly project: string; readonly construct?: string; readonly workers?: string },
): Promise<ServeFanOut> => {
  const found = await projectFanOut({ project: options.project, ...(options.construct === undefined ? {} : { construct: options.construct }) });
  const chosen: ServeFanOut =
    found.source === 'app'
      ? { workers: options.workers === undefined ? found.workers : workerModulePath(options.workers), fanOut: found.props, found }
      : { workers: workerModulePath(options.workers), found };
  io.err(fanOutLine(found, chosen.workers));
  return chosen;
};

/**
 * The local cloud synthesizes its own fan-out from the app's props, and the construct checks them
 * again there: a problem it finds (a kind of the app that `--workers`' module lacks, say) is the
 * app's, named with its field, and ends `serve` with one line. Any other error is returned as it is.
 *
 * @example
 * appPropsRefused(new InvalidConstructProps('TesseraLocal/FanOut', ['kinds.x: …']), found) // ProjectAppError: … the props of Strict/FanOut …
 */
export const appPropsRefused = (error: unknown, found: ProjectFanOut): unknown =>
  error instanceof InvalidConstructProps && found.source === 'app'
    ? new ProjectAppError(CDK_JSON, `the props of ${found.constructPath} do not work locally: ${error.problems.join('; ')}`, { cause: error })
    : error;

const startServing = async (io: CliIo, chosen: ServeFanOut, options: Omit<Parameters<typeof startLocalSession>[1], 'workers' | 'fanOut'>) => {
  try {
    return await startLocalSession(io, { ...options, workers: chosen.workers, ...(chosen.fanOut ? { fanOut: chosen.fanOut } : {}) });
  } catch (error) {
    throw appPropsRefused(error, chosen.found);
  }
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
    // Resolved before the app is synthesized, so a wrong path fails at once.
    const workers = values.workers === undefined ? undefined : workerModulePath(values.workers);
    const example = values.run;
    const body = example === undefined ? undefined : await readJson(io, example);
    io.err('Starting the local cloud…');
    const chosen = await serveFanOut(io, {
      project: projectDirectory(),
      ...(values.construct === undefined ? {} : { construct: values.construct }),
      ...(workers === undefined ? {} : { workers }),
    });
    const { cloud, token } = await startServing(io, chosen, { ports, verbose: values.verbose === true });
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
