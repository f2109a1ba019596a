/**
 * The chaos property suite at scale: 1,000 runs of random fault schedules (duplicate deliveries,
 * crashes after claim, late results, transient failures, poison messages, model calls beyond the
 * allowance, cancels at random times) against one local cloud, many at once, and the count of
 * runs that broke each invariant of test/chaos/schedule.ts (0 everywhere is the expected result),
 * beside the terminal states and run statuses the faults produced.
 *
 * `npm run bench -- chaos`; `CHAOS_RUNS`, `CHAOS_SEED` and `CHAOS_CONCURRENCY` change the number of
 * runs, the seed (printed, so a broken run reproduces) and how many are in flight at once. Every
 * broken run is printed with its schedule. The baseline is the same schedules' fault mix, counted
 * from the schedules themselves: how many runs carried each fault.
 *
 * A run still `running` when the harness's wait (120 s) ends is read again once its execution has
 * ended: on an overloaded machine a run can outlast the wait without being stuck. Only a run still
 * `running` after its execution ended counts as left non-terminal; the slow ones are listed.
 *
 * Run alone: `npx tsx bench/chaos.bench.ts`.
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import fc from 'fast-check';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { createTesseraClient, type TesseraClient } from '../lib/client';
import { STACK_OUTPUTS } from '../lib/infra/stack-outputs';
import { LOCAL_CREDENTIALS } from '../lib/local/lambda-client';
import { loopbackOrigin } from '../lib/local/loopback-dns';
import type { ExecutionEvent, ExecutionRecord, ExecutionService } from '../lib/local/sfn-executions';
import { startTesseraCloud } from '../lib/local/tessera-cloud';
import { countInvariants, INVARIANTS, playAll, scheduleArbitrary, violations, type ChaosTarget, type PlayedRun, type Schedule } from '../test/chaos/schedule';
import { exampleWorkerModule } from '../examples/app/cdk';

const RUNS = Number(process.env.CHAOS_RUNS ?? 1_000);
const CONCURRENCY = Number(process.env.CHAOS_CONCURRENCY ?? 20);
const SEED = Number(process.env.CHAOS_SEED ?? Date.now() % 2_147_483_647);
const WAIT_MS = 120_000;
/** Runs per tenant, so no tenant reaches its daily model-call allowance (2,000) during the benchmark. */
const RUNS_PER_TENANT = 200;

const faultMix = (schedules: readonly Schedule[]) => {
  const mix: Record<string, number> = {};
  const add = (name: string) => (mix[name] = (mix[name] ?? 0) + 1);
  for (const schedule of schedules) {
    for (const fault of new Set(schedule.subtasks.map((s) => s.fault))) add(fault);
    if (schedule.subtasks.some((s) => s.duplicates > 0)) add('duplicates');
    if (schedule.subtasks.some((s) => s.fault === 'transient' && s.recoversAfterMs === null)) add('poison');
    if (schedule.subtasks.some((s) => s.modelCalls > s.allowance)) add('over-allowance');
    if (schedule.cancelAfterMs !== null) add('cancel');
  }
  return mix;
};

/** The longest a run's execution may still take after the harness's wait (the state machine's own timeout is longer). */
const EXECUTION_GRACE_MS = 600_000;

/**
 * A run still `running` when the harness's wait ended is slow (an overloaded machine) or stuck.
 * Tell them apart: wait for its execution to end, then read the run again, replacing what was
 * played. A run that is still `running` after its execution ended is stuck, and breaks
 * "no run is left non-terminal". Returns the run ids that needed the extra wait.
 */
const awaitSlowRuns = async (executions: ExecutionService, played: PlayedRun[], clients: ReadonlyMap<string, TesseraClient>): Promise<string[]> => {
  const late: string[] = [];
  for (const [index, run] of played.entries()) {
    if (run.ended !== null && run.ended.status !== 'running' && run.ended.answer !== null) continue;
    const record = executions.executions().find((r) => r.name === run.runId);
    const client = clients.get(run.runId);
    if (record === undefined || client === undefined) continue;
    late.push(run.runId);
    await Promise.race([executions.settled(record.executionArn), new Promise((resolve) => setTimeout(resolve, EXECUTION_GRACE_MS))]);
    // The closing rule and late results land just after the execution ends.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const reread = await client.getRun(run.runId);
    played[index] = { ...run, ended: reread, settled: reread };
  }
  return late;
};

/** Where a broken run's execution stands: its status and its last events, to tell a slow run from a stuck one. */
const describeExecution = (records: readonly ExecutionRecord[], runId: string): string => {
  const record = records.find((r) => r.name === runId);
  if (record === undefined) return '  no execution was started for it';
  const startedAt = record.startDate.getTime();
  const label = (event: ExecutionEvent): string => {
    const state = Reflect.get(event, 'state') as { name?: unknown } | undefined;
    const error = Reflect.get(event, 'error') as { name?: unknown } | undefined;
    return [event.type, state?.name, error?.name].filter((part) => typeof part === 'string').join(' ');
  };
  const last = record.events.slice(-12).map((event) => `    +${((event.timestamp - startedAt) / 1000).toFixed(1)} s  ${label(event)}`);
  return [`  execution ${record.status}, started ${record.startDate.toISOString()}, ${record.events.length} events; the last:`, ...last].join('\n');
};

export async function run(): Promise<void> {
  console.log(`chaos seed ${SEED} (CHAOS_SEED=${SEED} replays these schedules); ${RUNS} runs, ${CONCURRENCY} at once`);
  const schedules = fc.sample(scheduleArbitrary, { seed: SEED, numRuns: RUNS });
  const cloud = await startTesseraCloud({
    // The chaos kind is the example app's fault-injection kind.
    workers: exampleWorkerModule({ faultInjection: true }),
    functionLogLevel: 'ERROR',
    log: (entry) => {
      if (entry.level === 'error') console.error(`[local cloud: ${entry.component}] ${entry.message}`);
    },
  });
  try {
    const sqs = new SQSClient({
      region: cloud.region,
      endpoint: loopbackOrigin(cloud.endpoints.sqs),
      useQueueUrlAsEndpoint: false,
      credentials: LOCAL_CREDENTIALS,
    });
    const queueUrl = z.object({ chaos: z.string() }).parse(JSON.parse(cloud.outputs[STACK_OUTPUTS.subtaskQueueUrls] ?? '{}')).chaos;
    const played: PlayedRun[] = [];
    const clients = new Map<string, TesseraClient>();
    const started = Date.now();
    for (let from = 0; from < schedules.length; from += RUNS_PER_TENANT) {
      const tenantId = `chaos-${from / RUNS_PER_TENANT + 1}`;
      const target: ChaosTarget = {
        client: createTesseraClient({ apiUrl: cloud.apiUrl ?? '', token: await cloud.mintToken({ tenant: tenantId, subject: 'bench' }) }),
        tenantId,
        deliver: async (message) => {
          await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(message) }));
        },
      };
      const batch = await playAll(target, schedules.slice(from, from + RUNS_PER_TENANT), { concurrency: CONCURRENCY, waitMs: WAIT_MS });
      for (const run of batch) clients.set(run.runId, target.client);
      played.push(...batch);
      console.log(`  ${played.length}/${RUNS} runs played (${Math.round((Date.now() - started) / 1000)} s)`);
    }
    const late = await awaitSlowRuns(cloud.executions, played, clients);
    if (late.length > 0)
      console.log(`${late.length} run(s) still running when the ${WAIT_MS / 1000}-s wait ended; re-read after their executions ended: ${late.join(', ')}`);
    const counts = countInvariants(played);
    console.log(`\nfault mix (runs carrying each fault): ${JSON.stringify(faultMix(schedules))}`);
    console.log(`run statuses: ${JSON.stringify(counts.statuses)}`);
    console.log(`subtask terminal states (${counts.subtasks} subtasks): ${JSON.stringify(counts.states)}`);
    console.log('\nruns breaking each invariant:');
    for (const [name, text] of Object.entries(INVARIANTS)) console.log(`  ${String(counts.violations[name as keyof typeof INVARIANTS]).padStart(5)}  ${text}`);
    for (const run of played) {
      const found = Object.entries(violations(run)).filter(([, problems]) => problems.length > 0);
      if (found.length === 0) continue;
      console.log(`broken: run ${run.runId} ${JSON.stringify(Object.fromEntries(found))} schedule ${JSON.stringify(run.schedule)}`);
      console.log(describeExecution(cloud.executions.executions(), run.runId));
    }
  } finally {
    await cloud.stop();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await run();
}
