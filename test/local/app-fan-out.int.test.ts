import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveFanOut, type ServeFanOut } from '../../lib/cli/serve';
import type { CliIo } from '../../lib/cli/router';
import { createTesseraClient } from '../../lib/client';
import type { RunRequestInput } from '../../lib/contract';
import { validateRunRequest } from '../../lib/domain';
import { FAN_OUT_DEFAULTS } from '../../lib/infra/defaults';
import type { LocalCloud } from '../../lib/local/cloud';
import { startTesseraCloud } from '../../lib/local/tessera-cloud';
import { kindCapacity } from '../../lib/runtime/capacity';
import { loadWorkerRegistry } from '../../lib/workers/worker-module';

/*
 * Local fidelity: the local cloud runs the user's own CDK app. `tessera serve`'s fan-out lookup
 * synthesizes test/fixtures/apps/strict-fan-out (its cdk.json's `npx tsx app.ts`), whose
 * TesseraFanOut sets `kinds: { 'slow-invoices': { maxConcurrency: 2 } }`, `workerTimeout: 3 s` and
 * `maxDeadline: 60 s` (the construct's defaults: 5, 120 s and 900 s), and a local cloud started
 * with what it found must apply each of them. It starts that cloud of its own (an integration
 * file, not an e2e one: it is about the local cloud, so the emulator lane has nothing to run it on).
 *
 * Worked out by hand:
 * - max deadline: a subtask asking for 120 s is refused (`deadline_out_of_horizon`, "must be
 *   between 1 and 60 seconds (got 120)"); under the default 900 s it would be accepted.
 * - kinds: slow-invoices runs 2 invocations × 5 messages = 10 subtasks at once, each about 4 s
 *   (its `typicalSeconds`). Twelve subtasks due in 6 s run in ⌈12 / 10⌉ = 2 waves, 8 s: the
 *   11th and 12th (0-based 10 and 11, ⌈11/10⌉ × 4 = 8 > 6) cannot finish, so the 202 carries one
 *   `capacity_short` warning at `subtasks.10.deadlineSeconds`. At the default 25 at once they all
 *   run in one wave of 4 s: no warning.
 * - worker timeout: a subtask whose worker waits 5 s outlives the worker function's 3 s timeout,
 *   so its invocation fails (Sandbox.Timedout); within the default 120 s it would not.
 */

const FIXTURE = fileURLToPath(new URL('../fixtures/apps/strict-fan-out', import.meta.url));
const KIND = 'slow-invoices';

const request = (subtasks: number, deadlineSeconds: number, sleepMs: number): RunRequestInput => {
  const ids = Array.from({ length: subtasks }, (_, i) => `INV-${String(i + 1).padStart(2, '0')}`);
  return {
    goal: 'Total the invoices',
    universe: { dimension: 'ids', noun: 'invoice', ids },
    subtasks: ids.map((id) => ({
      id: `S${id.slice(4)}`,
      worker: KIND,
      scope: { ids: [id] },
      input: { sleepMs },
      required: true,
      justification: 'each invoice is part of the total',
      deadlineSeconds,
      budget: { modelCalls: 1, estimatedCostPerCall: 1 },
    })),
    budget: { modelCalls: subtasks, costLimit: subtasks },
  };
};

let chosen: ServeFanOut;
const lines: string[] = [];
let cloud: LocalCloud;
let token: string;

beforeAll(async () => {
  const io: CliIo = { out: () => undefined, err: (text) => void lines.push(text), readText: async () => '' };
  chosen = await serveFanOut(io, { project: FIXTURE });
  cloud = await startTesseraCloud({ workers: chosen.workers, ...(chosen.fanOut ? { fanOut: chosen.fanOut } : {}), functionLogLevel: 'ERROR' });
  token = await cloud.mintToken({ tenant: 'fidelity', subject: 'e2e-fidelity' });
  // Synthesizing the app and then the local fan-out takes tens of seconds on a loaded 2-core machine.
}, 300_000);

afterAll(async () => {
  await cloud?.stop();
});

const client = () => createTesseraClient({ apiUrl: cloud.apiUrl ?? '', token });

describe("the local cloud runs the project's CDK app", () => {
  it("finds the app's TesseraFanOut, with its settings and worker module, and says so in one line", () => {
    expect(chosen.found).toMatchObject({ source: 'app', app: 'npx tsx app.ts', constructPath: 'Strict/FanOut' });
    expect(chosen.workers).toBe(`${FIXTURE}/workers.ts`);
    expect(chosen.fanOut).toEqual({
      kinds: { [KIND]: { maxConcurrency: 2 } },
      workerTimeoutSeconds: 3,
      maxDeadlineSeconds: 60,
      // The rest is the construct's defaults, as the app leaves them.
      workerBatchingWindowSeconds: 0,
      mapMaxConcurrency: 40,
      batchConcurrency: 40,
      batchSubtasks: 500,
      tenantDailyAllowance: { modelCalls: 2000, costLimit: 200_000 },
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Fan-out Strict\/FanOut of the CDK app \(`npx tsx app\.ts`\): .*workers\.ts; kinds slow-invoices ×2 \(max concurrency\); /);
    expect(lines[0]).toContain('worker timeout 3 s; max deadline 60 s; batches of 500');
  });

  it("refuses a deadline beyond the app's maxDeadline (60 s), naming the field, where the default would accept it", async () => {
    const body = request(1, 120, 0);
    const answer = await fetch(`${cloud.apiUrl}/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(answer.status).toBe(400);
    expect(await answer.json()).toMatchObject({
      error: {
        code: 'InvalidRunRequest',
        issues: [{ code: 'deadline_out_of_horizon', path: 'subtasks.0.deadlineSeconds', message: 'must be between 1 and 60 seconds (got 120)' }],
      },
    });
    const registry = await loadWorkerRegistry(chosen.workers);
    expect(validateRunRequest(body, registry.catalog(), { maxDeadlineSeconds: FAN_OUT_DEFAULTS.maxDeadline.toSeconds() }).ok).toBe(true);
  });

  it("warns that the app's kinds setting (2 concurrent workers) cannot meet the deadlines, where the default (5) would", async () => {
    const body = request(12, 6, 0);
    const accepted = await client().createRun(body);
    expect(accepted.warnings).toEqual([
      {
        code: 'capacity_short',
        worker: KIND,
        path: 'subtasks.10.deadlineSeconds',
        message: '12 slow-invoices subtasks, 10 at a time of about 4 s each, take 2 waves (8 s): 2 cannot finish by their 6 s deadline',
      },
    ]);
    await client().cancelRun(accepted.runId);
    const registry = await loadWorkerRegistry(chosen.workers);
    const atDefaults = validateRunRequest(body, registry.catalog(), { maxDeadlineSeconds: 60, capacity: { [KIND]: kindCapacity() } });
    expect(atDefaults).toMatchObject({ ok: true, warnings: [] });
  });

  it("times a worker out after the app's workerTimeout (3 s), well inside the default 120 s", async () => {
    const worker = cloud.resources.functions.find((fn) => fn.logicalId.includes('WorkerFunction'));
    if (!worker) throw new Error('the template has no worker function');
    const before = cloud.lambdaStats()[worker.name]?.errors ?? 0;
    const started = Date.now();
    const accepted = await client().createRun(request(1, 30, 5_000));
    // The invocation fails at 3 s; wait up to 15 s for it (a loaded machine delays the first receive).
    while ((cloud.lambdaStats()[worker.name]?.errors ?? 0) === before && Date.now() - started < 15_000) await sleep(100);
    const elapsedMs = Date.now() - started;
    await client().cancelRun(accepted.runId);
    expect(cloud.lambdaStats()[worker.name]?.errors ?? 0).toBeGreaterThan(before);
    // Not before the 3 s timeout: the failure is the timeout, not the worker failing at once.
    expect(elapsedMs).toBeGreaterThanOrEqual(3_000);
  });
});
