/**
 * AWS calls per subtask, and what the orchestration costs per 1,000 subtasks, counted on the local
 * cloud for a 20-subtask run of no-op workers (`chaos`, `fault: 'none'`): five measured runs, and their median.
 *
 * DynamoDB Local and fauxqs each sit behind a counting proxy (`bench/request-counter.ts`), so
 * every call the handlers, the event-source-mapping pollers and the harness make is seen on the
 * wire, as AWS would bill it. Lambda invocations come from the local Lambda endpoint, state
 * transitions from the event logs of the run's execution and of its batches' child executions
 * (every round runs as batches: one child for 20 subtasks). A warm-up run takes the handlers'
 * cold starts and first connections; the five runs after it are measured, and the one of median
 * cost is reported in detail. Capacity units are estimated from item sizes (DynamoDB Local does
 * not bill), and the cost per 1,000 subtasks uses published us-east-1 prices.
 *
 * The baseline, computed in the same process from the same measurement: the poll-loop alternative
 * of docs/deadlines.md, which replaces each subtask's callback wait with Wait → Arm checks.
 *
 * Run alone: `npx tsx bench/pipeline.bench.ts`; `npm run bench -- pipeline` runs it through the index.
 */
import { pathToFileURL } from 'node:url';
import { createTesseraClient } from '../lib/client';
import { subtaskIteration } from './deadline-figures';
import { batchStateMachineDefinition, stateMachineDefinition } from '../lib/infra/synthesized';
import { STATE_NAMES } from '../lib/infra/run-state-machine';
import { measureRun, PER_1000, SETTLE_MS, startStack, SUBTASKS, TENANT, type Measurement } from './pipeline/setup';
import {
  checkpointWrites,
  finalSizes,
  dynamoRows,
  splitSqs,
  memoryByRole,
  type Usage,
  enteredStates,
  subtaskItemUnits,
  costOf,
  total,
  type Sizes,
} from './pipeline/model';
import {
  fixed,
  totalCapacity,
  printDynamo,
  billedRequests,
  printSqs,
  printLambda,
  printTransitions,
  printPrices,
  printComparison,
  printSummary,
  usd,
} from './pipeline/report';

/** Runs measured after the warm-up; the report is the median one's. */
const MEASURED_RUNS = 5;

const usageOf = (m: Measurement, sizes: Sizes): Usage => {
  const rows = dynamoRows(m.dynamodb, sizes);
  return { transitions: m.transitions, invocations: m.invocations, sqsRequests: billedRequests(splitSqs(m.sqs)), capacity: totalCapacity(rows) };
};

/** Prints AWS calls per subtask and the orchestration cost per 1,000 subtasks, with the poll-loop baseline. */
export async function run(): Promise<void> {
  // Powertools reads these from the process (as startTesseraCloud sets them): no EMF lines or X-Ray segments.
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  process.env.POWERTOOLS_TRACE_ENABLED ??= 'false';
  const stack = await startStack();
  try {
    const token = await stack.cloud.mintToken({ tenant: TENANT, subject: 'pipeline-bench' });
    const client = createTesseraClient({ apiUrl: stack.cloud.apiUrl ?? '', token });
    const warmup = await measureRun(stack, client, 'warm-up');
    const measured: Measurement[] = [];
    for (let i = 1; i <= MEASURED_RUNS; i += 1) measured.push(await measureRun(stack, client, `measured ${i}`));
    const sizes = await finalSizes(stack);
    const memory = memoryByRole(stack.template);
    const costs = measured.map((run) => ({ run, usd: total(costOf(usageOf(run, sizes), memory)) * PER_1000 }));
    const byCost = [...costs].sort((a, b) => a.usd - b.usd);
    const median = byCost[Math.floor(byCost.length / 2)]!;
    const m = median.run;
    console.log(`# Pipeline: AWS calls per subtask and orchestration cost (${SUBTASKS} chaos subtasks, fault 'none', ids universe of ${SUBTASKS}, one round)`);
    console.log(
      `${MEASURED_RUNS + 1} runs on the local cloud: a warm-up (${fixed(warmup.seconds, 1)} s: the handlers' cold starts, first connections) and ${MEASURED_RUNS} measured;`,
    );
    console.log(`counted from POST /runs until the execution ended, plus ${SETTLE_MS / 1000} s; all succeeded with ${SUBTASKS} of ${SUBTASKS} subtasks ok.`);
    console.log(
      `Orchestration cost per 1,000 no-op subtasks of the ${MEASURED_RUNS} measured runs: ${costs.map((c) => usd(c.usd)).join(', ')}; ` +
        `median ${usd(median.usd)} (${median.run.transitions} transitions, ${median.run.childTransitions} of them in ${median.run.children} child execution(s)). ` +
        'The median run is reported below.',
    );

    const rows = dynamoRows(m.dynamodb, sizes);
    const sqs = splitSqs(m.sqs);
    const asl = stateMachineDefinition(stack.template);
    const batchAsl = batchStateMachineDefinition(stack.template);
    const iteration = subtaskIteration(batchAsl);
    const entered = enteredStates(m.events);
    printSummary(m, rows, sqs, checkpointWrites(m.dynamodb));
    printDynamo(rows);
    printSqs(sqs);
    printLambda(m.invocations, memory);
    const batchIteration = asl.States[STATE_NAMES.awaitBatches]?.ItemProcessor;
    printTransitions(m.transitions, [asl, ...(batchIteration ? [batchIteration] : []), batchAsl], iteration, entered);
    printPrices();
    const usage = usageOf(m, sizes);
    printComparison({ usage, memory, entered, iteration, units: subtaskItemUnits(sizes, m.runId) });
  } finally {
    await stack.stop();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await run();
}
