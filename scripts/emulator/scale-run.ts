/**
 * The emulator lane's scale step (docs/emulator.md, "Scale"): one run of TESSERA_SCALE_SUBTASKS
 * no-op subtasks (default 2,000; bench/scale-request.ts) against TESSERA_API_URL as
 * TESSERA_TOKEN's tenant. The lane's deployment runs every round of more than 10 subtasks in
 * batches of 5, so the run is a batched round of 400 child executions, each started by StartBatch
 * and waited on with `startExecution.sync:2` in the emulator's own Step Functions.
 *
 * Progress is printed every 15 s. Exits 0 only if the run succeeded, every subtask is `ok` and
 * its coverage is complete; otherwise 1, naming what was missing. A child process of
 * scripts/emulator/run.ts, so that it starts with the emulator's certificate trusted.
 */
import { z } from 'zod';
import { noOpRunRequest } from '../../bench/scale-request';
import { createTesseraClient } from '../../lib/client';

/** Each subtask's deadline: the last of 2,000 may start minutes after the run does. */
const DEADLINE_SECONDS = 600;
/** How long the step waits for the run to end: its deadline and room to reconcile. */
const WAIT_MS = (DEADLINE_SECONDS + 180) * 1000;
const PROGRESS_EVERY_MS = 15_000;

const env = z
  .object({ TESSERA_API_URL: z.url(), TESSERA_TOKEN: z.string().min(1), TESSERA_SCALE_SUBTASKS: z.coerce.number().int().min(1).default(2000) })
  .parse(process.env);
const size = env.TESSERA_SCALE_SUBTASKS;
const tessera = createTesseraClient({ apiUrl: env.TESSERA_API_URL, token: env.TESSERA_TOKEN });

const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(0)} s`;
const { runId } = await tessera.createRun(noOpRunRequest(size, 'emulator lane', DEADLINE_SECONDS));
console.log(`scale: run ${runId} of ${size} no-op subtasks accepted`);
let lastPrinted = 0;
const run = await tessera.waitForRun(runId, {
  intervalMs: 2000,
  timeoutMs: WAIT_MS,
  onProgress: (current) => {
    if (Date.now() - lastPrinted < PROGRESS_EVERY_MS) return;
    lastPrinted = Date.now();
    const states = Object.entries(current.progress.byState)
      .map(([state, count]) => `${state} ${count}`)
      .join(', ');
    console.log(`scale: ${elapsed()}: ${current.status}; ${states || 'no subtask reported yet'}`);
  },
});
const seconds = (Date.now() - started) / 1000;
const ok = run.progress.byState.ok ?? 0;
const complete = run.answer?.coverage.complete === true;
console.log(
  `scale: ${size} subtasks: ${run.status}, ${ok} ok, coverage ${complete ? 'complete' : 'INCOMPLETE'}, ${seconds.toFixed(1)} s (${(size / seconds).toFixed(1)} subtasks/s)`,
);
const problems = [
  ...(run.status === 'succeeded' ? [] : [`the run ended ${run.status}${run.error ? ` (${run.error.code}: ${run.error.message})` : ''}`]),
  ...(ok === size ? [] : [`${size - ok} of ${size} subtasks are not ok`]),
  ...(complete ? [] : [`coverage is incomplete: ${(run.answer?.coverage.degradedReason ?? []).join(', ') || 'no answer'}`]),
];
if (problems.length > 0) {
  console.error(`scale: FAILED: ${problems.join('; ')}`);
  process.exit(1);
}
