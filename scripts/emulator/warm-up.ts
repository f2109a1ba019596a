/**
 * The emulator lane's warm-up (docs/emulator.md, "Cold starts"): one run of each example the e2e
 * suite uses, all at once, against TESSERA_API_URL as TESSERA_TOKEN's tenant. Every function of
 * the deployed stack then has a warm process before the suite's first deadline starts. The runs'
 * results are printed, not checked: checking is the suite's job. A child process of
 * scripts/emulator/run.ts, so that it starts with the emulator's certificate trusted.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { createTesseraClient } from '../../lib/client';
import { RunRequest } from '../../lib/contract';

/** The examples the e2e suite runs. */
const WARM_UP_EXAMPLES = ['tax-2025', 'scout', 'catering', 'chaos-late'];

const env = z.object({ TESSERA_API_URL: z.url(), TESSERA_TOKEN: z.string().min(1) }).parse(process.env);
const root = resolve(import.meta.dirname, '..', '..');
const tessera = createTesseraClient({ apiUrl: env.TESSERA_API_URL, token: env.TESSERA_TOKEN });

await Promise.all(
  WARM_UP_EXAMPLES.map(async (name) => {
    const request = RunRequest.parse(JSON.parse(readFileSync(join(root, 'examples', `${name}.json`), 'utf8')));
    const { runId } = await tessera.createRun(request);
    const run = await tessera.waitForRun(runId, { intervalMs: 500, timeoutMs: 180_000 });
    const degraded = run.answer?.coverage.degradedReason ?? [];
    console.log(`warm-up ${name}: ${run.status}${degraded.length > 0 ? ` (${degraded.join(', ')})` : ''}`);
  }),
);
