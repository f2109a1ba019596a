/**
 * `get_run` of a real 1,000-subtask run, in bytes, against its bound (`GET_RUN_MAX_BYTES`, 8 KB).
 * The unit test (test/mcp/mcp.test.ts) measures a synthetic worst case; this measures what the
 * local cloud actually writes: it starts the local cloud (the example app's workers, with the
 * `chaos` kind), runs 1,000 no-op subtasks (bench/scale-request.ts: an ids universe of 1,000,
 * one id each, `fault: 'none'`), waits for the answer, and calls `get_run` through the MCP server
 * at the cloud's `/mcp` (Streamable HTTP, the deployed path) with the official SDK's Client.
 *
 * Printed beside it, measured the same way in the same process: the run resource as
 * `GET /runs/{runId}` answers it by default, its `?subtasks=page` form, `get_run` with a page of
 * 50 subtask rows, and the task's `tasks/get` and `tasks/result`. Sizes only: time is printed
 * for context and never compared to anything.
 *
 * `nice -n 10 npx tsx bench/mcp-get-run.bench.ts` (or `npm run bench -- mcp-get-run`);
 * `MCP_BENCH_SUBTASKS` changes the 1,000.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { exampleWorkerModule } from '../examples/app/cdk';
import { createTesseraClient } from '../lib/client';
import { startTesseraCloud } from '../lib/local/tessera-cloud';
import { GET_RUN_MAX_BYTES, jsonBytes } from '../lib/mcp';
import { noOpRunRequest } from './scale-request';

const SUBTASKS = Number(process.env.MCP_BENCH_SUBTASKS ?? 1000);
/** The planner's longest deadline: a large run's last subtasks start late on a loaded machine. */
const DEADLINE_SECONDS = 900;

const kb = (bytes: number) => `${bytes.toLocaleString('en-GB')} bytes (${(bytes / 1024).toFixed(1)} KiB)`;

/** Starts the run, waits for its answer, and prints the sizes. */
export async function run(): Promise<void> {
  const cloud = await startTesseraCloud({ workers: exampleWorkerModule({ faultInjection: true }), functionLogLevel: 'ERROR' });
  const mcp = new Client({ name: 'mcp-get-run-bench', version: '1.0.0' });
  try {
    const apiUrl = cloud.apiUrl ?? '';
    const token = await cloud.mintToken({ tenant: 'bench', subject: 'mcp-get-run-bench' });
    const tessera = createTesseraClient({ apiUrl, token });
    const started = Date.now();
    const { runId } = await tessera.createRun(noOpRunRequest(SUBTASKS, 'mcp get_run', DEADLINE_SECONDS), { idempotencyKey: `mcp-bench-${started}` });
    const ended = await tessera.waitForRun(runId, { timeoutMs: (DEADLINE_SECONDS + 300) * 1000 });
    console.log(
      `run ${runId}: ${ended.status}, ${ended.progress.terminal}/${ended.progress.dispatched} subtasks ended, ` +
        `complete: ${String(ended.answer?.coverage.complete)}, in ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );

    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${apiUrl.replace(/\/$/, '')}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    );
    const getRun = await mcp.callTool({ name: 'get_run', arguments: { runId } });
    const text = (getRun.content as { type: string; text?: string }[])[0]?.text ?? '';
    const withRows = await mcp.callTool({ name: 'get_run', arguments: { runId, subtasks: true, limit: 50 } });
    const task = await mcp.experimental.tasks.getTask(runId);
    const taskResult = await mcp.experimental.tasks.getTaskResult(runId, CallToolResultSchema);
    const full = await tessera.getRun(runId);
    const page = await tessera.getRun(runId, { subtasks: 'page' });

    const bytes = Buffer.byteLength(text, 'utf8');
    console.log(
      `get_run of a real ${SUBTASKS}-subtask run over /mcp: ${kb(bytes)}; bound ${kb(GET_RUN_MAX_BYTES)}: ${bytes <= GET_RUN_MAX_BYTES ? 'within' : 'OVER'}`,
    );
    console.log(`  its structuredContent: ${kb(jsonBytes(getRun.structuredContent))}`);
    console.log(`  get_run with 50 subtask rows: ${kb(jsonBytes(withRows.structuredContent))}`);
    console.log(`  tasks/get: ${kb(jsonBytes(task))} (status ${task.status}); tasks/result: ${kb(jsonBytes(taskResult.structuredContent))}`);
    console.log(`  the run resource as GET /runs/{runId} answers by default (${full.subtasks.length} subtasks in it): ${kb(jsonBytes(full))}`);
    if (page.modified) console.log(`  GET /runs/{runId}?subtasks=page (a first page of subtasks): ${kb(jsonBytes(page.run))}`);
  } finally {
    await mcp.close();
    await cloud.stop();
  }
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} at the end (2 cores: above 2, other processes share the machine)`,
  );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await run();
}
