import { parseArgs } from 'node:util';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { planRequest } from '../application/plan-request';
import { createTesseraClient } from '../client';
import { DEFAULT_MAX_DEADLINE_SECONDS, withModels } from '../domain';
import { createTesseraMcpServer } from '../mcp/server';
import { kindCapacity } from '../runtime/capacity';
import { UsageError } from './errors';
import { COMMAND_HELP } from './help';
import { readLocalState } from './local-state';
import type { CliIo, Command } from './router';
import { cliRegistry } from './workers';

const USAGE = COMMAND_HELP.mcp.usage;

const usageError = (problem: string, cause?: unknown): UsageError => new UsageError('mcp', problem, USAGE, cause === undefined ? {} : { cause });

const parse = (args: readonly string[]) => {
  try {
    return parseArgs({
      args: [...args],
      options: { api: { type: 'string' }, token: { type: 'string' }, workers: { type: 'string' } },
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
 * the running local cloud's API with its token (.tessera/local.json), or to `--api URL` with
 * `--token JWT` (or TESSERA_TOKEN). `plan_run` checks requests against the worker module's kinds
 * at the construct's default horizon and capacity, as `tessera plan` does; `start_run` is refused
 * by the API itself with the same problems if the deployment differs. Stdout carries the protocol
 * alone: everything else goes to stderr. It ends when stdin closes.
 *
 * @example
 * await createMcpCommand().run(['--api', 'https://api.example.com', '--token', jwt], processIo());
 */
export const createMcpCommand = (options: McpCommandOptions = {}): Command => ({
  ...COMMAND_HELP.mcp,
  run: async (args, io: CliIo) => {
    const values = parse(args);
    let target: { apiUrl: string; token: string };
    if (values.api !== undefined) {
      const token = values.token ?? process.env.TESSERA_TOKEN;
      if (!token) throw usageError('--api needs a token: pass --token JWT or set TESSERA_TOKEN');
      target = { apiUrl: values.api, token };
    } else {
      const running = await readLocalState();
      if (running === undefined) {
        io.err('tessera mcp: no local cloud is running (start one with npm start), and no --api was given.');
        return 1;
      }
      target = { apiUrl: running.apiUrl, token: values.token ?? running.token };
    }
    const loaded = (await cliRegistry(values.workers)).catalog();
    const catalog = options.models ? withModels(loaded, options.models) : loaded;
    const capacity = Object.fromEntries(catalog.kinds().map((kind) => [kind, kindCapacity()]));
    const plan = planRequest({ catalog, maxDeadlineSeconds: DEFAULT_MAX_DEADLINE_SECONDS, capacity });
    const server = createTesseraMcpServer({ client: createTesseraClient(target), plan });
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
