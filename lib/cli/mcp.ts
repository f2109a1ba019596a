import { parseArgs } from 'node:util';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { planRequest } from '../application/plan-request';
import { createTesseraClient } from '../client';
import { DEFAULT_MAX_DEADLINE_SECONDS, withModels } from '../domain';
import { createTesseraMcpServer } from '../mcp/server';
import { kindCapacity } from '../runtime/capacity';
import { UsageError } from './errors';
import { COMMAND_HELP } from './help';
import { API_OPTIONS, resolveApiTarget } from './api-target';
import type { CliIo, Command } from './router';
import { cliRegistry } from './workers';

const USAGE = COMMAND_HELP.mcp.usage;

const usageError = (problem: string, cause?: unknown): UsageError => new UsageError('mcp', problem, USAGE, cause === undefined ? {} : { cause });

const parse = (args: readonly string[]) => {
  try {
    return parseArgs({
      args: [...args],
      options: { ...API_OPTIONS, workers: { type: 'string' } },
      allowPositionals: false,
      strict: true,
    }).values;
  } catch (error) {
    throw usageError(error instanceof Error ? error.message : String(error), error);
  }
};

/** What the mcp command plans requests against. */
export interface McpCommandOptions {
  /** Model ids requests may name, applied to the worker module's catalog (`withModels`). @default - the catalog's own */
  readonly models?: readonly string[];
}

/**
 * `tessera mcp`: an MCP server on stdin and stdout, for agent desktops and IDEs. Its tools talk to
 * the API that `resolveApiTarget` finds: `--api URL` or TESSERA_API_URL with a token from
 * `--token-file`, TESSERA_TOKEN or `--token`, else the running local cloud with its token. `plan_run` checks requests against the worker module's kinds
 * at the construct's default horizon and capacity, as `tessera plan` does; `start_run` is refused
 * by the API itself with the same problems if the deployment differs. Stdout carries the protocol
 * alone: everything else goes to stderr. It ends when stdin closes.
 *
 * @example
 * await createMcpCommand().run(['--api', 'https://api.example.com', '--token-file', 'token.txt'], processIo());
 */
export const createMcpCommand = (options: McpCommandOptions = {}): Command => ({
  ...COMMAND_HELP.mcp,
  run: async (args, io: CliIo) => {
    const values = parse(args);
    const target = await resolveApiTarget('mcp', USAGE, values, io);
    if (target === undefined) {
      io.err('tessera mcp: no local cloud is running (start one with npm start), and no --api or TESSERA_API_URL was given.');
      return 1;
    }
    const loaded = (await cliRegistry(values.workers)).catalog();
    const catalog = options.models ? withModels(loaded, options.models) : loaded;
    const capacity = Object.fromEntries(catalog.kinds().map((kind) => [kind, kindCapacity()]));
    const plan = planRequest({ catalog, maxDeadlineSeconds: DEFAULT_MAX_DEADLINE_SECONDS, capacity });
    const server = createTesseraMcpServer({ client: createTesseraClient({ apiUrl: target.apiUrl, token: target.token }), plan });
    const closed = new Promise<void>((resolve) => {
      server.server.onclose = resolve;
    });
    await server.connect(new StdioServerTransport());
    // The SDK's stdio transport does not watch for the end of its input: the client going away is the end.
    process.stdin.once('end', () => void server.close());
    io.err(`tessera mcp: serving on stdio for ${target.apiUrl}`);
    await closed;
    return 0;
  },
});
