import { parseArgs } from 'node:util';
import { existsSync } from 'node:fs';
import { relative } from 'node:path';
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

/**
 * What `serve` prints once the cloud is up; with a token, first the viewer's address (the token
 * rides in the URL fragment, which the browser never sends to a server).
 *
 * @example banner(apiUrl, { ...cloud.endpoints }, token)
 */
export const banner = (apiUrl: string, endpoints: Record<string, string | undefined>, token?: string): string =>
  [
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
    '  npx tessera run examples/scout.json',
    `  TOKEN=$(node -p "require('./.tessera/local.json').token")`,
    `  curl -s -X POST ${apiUrl}/runs -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' --data @examples/tax-2025.json`,
    `  curl -s ${apiUrl}/runs/RUN_ID -H "authorization: Bearer $TOKEN"`,
    ...(existsSync('examples') ? ['Example requests: examples/'] : []),
  ].join('\n');

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
    io.out(banner(apiUrl, { ...cloud.endpoints }, token));
    if (body !== undefined) {
      io.out(`\nRunning ${example}:`);
      await submitAndReport(io, createTesseraClient({ apiUrl, token }), body, { json: false, apiUrl, local: true });
      io.out('\nThe local cloud is still running. Ctrl-C stops it.');
    }
    await stopped;
    return 0;
  },
};
