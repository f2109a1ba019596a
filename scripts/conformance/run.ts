import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MCP_PATH } from '../../lib/contract';

/**
 * `npm run test:conformance`: the official MCP conformance suite (`@modelcontextprotocol/conformance`,
 * its server scenarios) against the local cloud's `/mcp`, the route the api function serves behind
 * the JWT authorizer. The suite sends no token, so a loopback proxy adds the one the local cloud
 * mints and forwards every request as it is. Prints the suite's results; exits non-zero when a
 * check fails that scripts/conformance/expected-failures.yml does not list (each one listed is
 * explained in docs/agents.md, "MCP conformance").
 *
 * Settings (environment): CONFORMANCE_SCENARIO, one scenario instead of the active suite.
 */
const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const EXPECTED = join(REPO_ROOT, 'scripts', 'conformance', 'expected-failures.yml');
const CLI = join(REPO_ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

const bodyOf = async (request: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

/** A loopback server that forwards to `target` with `authorization` added. */
const startProxy = async (target: string, token: string) => {
  const server = createServer((request, response) => {
    void (async () => {
      const body = await bodyOf(request);
      const headers = Object.entries(request.headers).flatMap(([name, value]): [string, string][] =>
        name === 'host' || name === 'content-length' || value === undefined ? [] : [[name, Array.isArray(value) ? value.join(', ') : value]],
      );
      const answer = await fetch(`${target}${request.url ?? ''}`, {
        method: request.method ?? 'GET',
        headers: [...headers, ['authorization', `Bearer ${token}`]],
        ...(request.method === 'GET' || request.method === 'HEAD' ? {} : { body: body.toString('utf8') }),
      });
      response.writeHead(answer.status, Object.fromEntries([...answer.headers.entries()].filter(([name]) => name !== 'content-encoding')));
      response.end(Buffer.from(await answer.arrayBuffer()));
    })().catch((error: unknown) => {
      response.writeHead(502).end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
};

const runSuite = (url: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const scenario = process.env.CONFORMANCE_SCENARIO;
    const args = [CLI, 'server', '--url', url, ...(scenario ? ['--scenario', scenario] : ['--expected-failures', EXPECTED])];
    const child = spawn(process.execPath, args, { stdio: 'inherit', cwd: REPO_ROOT });
    child.once('error', reject);
    child.once('close', (code) => resolve(code ?? 1));
  });

const main = async (): Promise<number> => {
  if (!existsSync(CLI)) throw new Error('@modelcontextprotocol/conformance is not installed: run npm ci');
  const started = Date.now();
  console.log('conformance: starting the local cloud');
  const { startTesseraCloud } = await import('../../lib/local/tessera-cloud');
  const { exampleWorkerModule } = await import('../../examples/app/cdk');
  const cloud = await startTesseraCloud({ workers: exampleWorkerModule({ faultInjection: false }), functionLogLevel: 'ERROR' });
  try {
    if (!cloud.apiUrl) throw new Error('the local cloud serves no HTTP API');
    const token = await cloud.mintToken({ tenant: 'conformance', subject: 'conformance', expiresIn: '1h' });
    const proxy = await startProxy(cloud.apiUrl.replace(/\/$/, ''), token);
    try {
      console.log(`conformance: @modelcontextprotocol/conformance server scenarios against ${cloud.apiUrl}${MCP_PATH} (through ${proxy.url})`);
      const code = await runSuite(`${proxy.url}${MCP_PATH}`);
      console.log(`conformance: exit ${code} after ${Math.round((Date.now() - started) / 1000)} s`);
      return code;
    } finally {
      await proxy.stop();
    }
  } finally {
    await cloud.stop();
  }
};

process.exitCode = await main();
