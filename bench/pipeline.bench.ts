/**
 * AWS calls per subtask, and what the orchestration costs per 1,000 subtasks, counted on the local
 * cloud for a 20-subtask run of no-op workers (`chaos`, `fault: 'none'`).
 *
 * DynamoDB Local and fauxqs each sit behind a counting proxy (`bench/request-counter.ts`), so
 * every call the handlers, the event-source-mapping pollers and the harness make is seen on the
 * wire, as AWS would bill it. Lambda invocations come from the local Lambda endpoint, state
 * transitions from the execution's event log. A warm-up run takes the handlers' cold starts and
 * first connections; the second run is the one measured. Capacity units are estimated from item sizes (DynamoDB Local does
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
import { stateMachineDefinition } from '../lib/infra/synthesized';
import { measureRun, SETTLE_MS, startStack, SUBTASKS, TENANT } from './pipeline/setup';
import { checkpointWrites, finalSizes, dynamoRows, splitSqs, memoryByRole, type Usage, enteredStates, subtaskItemUnits } from './pipeline/model';
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
} from './pipeline/report';

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
    const m = await measureRun(stack, client, 'measured');
    const sizes = await finalSizes(stack);
    console.log(`# Pipeline: AWS calls per subtask and orchestration cost (${SUBTASKS} chaos subtasks, fault 'none', ids universe of ${SUBTASKS}, one round)`);
    console.log(
      `Two runs on the local cloud: a warm-up (${fixed(warmup.seconds, 1)} s: the handlers' cold starts, first connections) and the measured one (${fixed(m.seconds, 1)} s);`,
    );
    console.log(`counted from POST /runs until the execution ended, plus ${SETTLE_MS / 1000} s; both succeeded with ${SUBTASKS} of ${SUBTASKS} subtasks ok.`);

    const rows = dynamoRows(m.dynamodb, sizes);
    const sqs = splitSqs(m.sqs);
    const memory = memoryByRole(stack.template);
    const asl = stateMachineDefinition(stack.template);
    const iteration = subtaskIteration(asl);
    const entered = enteredStates(m.events);
    printSummary(m, rows, sqs, checkpointWrites(m.dynamodb));
    printDynamo(rows);
    printSqs(sqs);
    printLambda(m.invocations, memory);
    printTransitions(m.transitions, asl, iteration, entered);
    printPrices();
    const usage: Usage = { transitions: m.transitions, invocations: m.invocations, sqsRequests: billedRequests(sqs), capacity: totalCapacity(rows) };
    printComparison({ usage, memory, entered, iteration, units: subtaskItemUnits(sizes, m.runId) });
  } finally {
    await stack.stop();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await run();
}
