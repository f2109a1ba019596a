/**
 * The local cloud at thousands of subtasks: runs of 1,000, 5,000 and 10,000 no-op subtasks
 * (`chaos`, `fault: 'none'`: each reads its one id and finishes), one after another on one local
 * cloud, and per size prints wall time, subtasks per second, peak memory, DynamoDB write units per
 * subtask, the AWS calls counted per service and the orchestration's cost per 1,000 subtasks, each
 * beside the 1,000 size measured in the same process (issue 14: flat within 1.3×).
 *
 * The stack is the pipeline benchmark's (bench/pipeline/setup.ts): the synthesized template, the
 * real handler modules, DynamoDB Local and fauxqs each behind a counting proxy
 * (bench/request-counter.ts). Capacity units are counted from the requests (item sizes by
 * DynamoDB's rules, bench/pipeline/model.ts), not read from DynamoDB Local, which does not bill.
 *
 * The request is the same at every size (bench/scale-request.ts), so only the planner's
 * `MAX_SUBTASKS` decides whether a size is accepted. A size it refuses (`plan_too_large`) is
 * reported as refused, with the planner's message, and the next size runs.
 *
 * Sizes: `npm run bench -- scale 1000 5000`, `npx tsx bench/scale.bench.ts 1000`, or
 * `SCALE_SIZES=1000,5000`; the default is 1,000, 5,000 and 10,000.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { createTesseraClient, TesseraApiError, type TesseraClient } from '../lib/client';
import { PRICES, PRICES_REGION } from './deadline-figures';
import { STATE_NAMES } from '../lib/infra/run-state-machine';
import type { Exchange } from './request-counter';
import type { ExecutionEvent } from '../lib/local/sfn-executions';
import {
  ASSUMED_MS,
  compactDynamoRows,
  costOf,
  createCompactor,
  finalSizes,
  memoryByRole,
  total,
  WRITES,
  type CompactExchange,
  type RunCost,
} from './pipeline/model';
import { fixed, table, totalCapacity, usd } from './pipeline/report';
import { noOpRunRequest } from './scale-request';
import { invocationsSince, ROLES, startStack, TENANT, type Role, type Stack } from './pipeline/setup';

const DEFAULT_SIZES = [1000, 5000, 10_000] as const;
/** The planner's longest deadline (MAX_DEADLINE_SECONDS' default): a large run's last subtasks start late. */
const DEADLINE_SECONDS = 900;
/** A size whose execution has not ended this long after its deadline is reported as stuck. */
const GRACE_MS = 120_000;
/** docs/deadlines.md, "Cost per subtask": the callback design's cost per 1,000 subtasks on the small-run path. */
const DOCUMENTED_USD_PER_1000 = { low: 0.09, high: 0.11 } as const;
/** SQS bills each 64 KB chunk of a request's payload as one request. */
const SQS_CHUNK_BYTES = 64 * 1024;
const WARMUP_SUBTASKS = 20;

const sizesFrom = (argv: readonly string[], env: string | undefined): number[] => {
  const given = [...argv.filter((arg) => /^\d+$/.test(arg)), ...(env ?? '').split(',').filter((part) => /^\d+$/.test(part.trim()))].map(Number);
  return given.length > 0 ? [...new Set(given)].sort((a, b) => a - b) : [...DEFAULT_SIZES];
};

/** Resident set size of a process in bytes, from /proc (Linux); undefined elsewhere or once it has gone. */
const rssOf = (pid: number): number | undefined => {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
};

/** Open file descriptors of this process (sockets included), from /proc (Linux); 0 elsewhere. */
const openFiles = (): number => {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return 0;
  }
};

/**
 * Samples this process's RSS (the local cloud runs in it, as in `tessera serve`), DynamoDB Local's
 * JVM's, and this process's open file descriptors, keeping the peaks.
 */
const memorySampler = (jvmPid: number) => {
  let node = 0;
  let jvm = 0;
  let files = 0;
  const sample = () => {
    node = Math.max(node, process.memoryUsage.rss());
    jvm = Math.max(jvm, rssOf(jvmPid) ?? 0);
    files = Math.max(files, openFiles());
  };
  sample();
  const timer = setInterval(sample, 250);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return { node, jvm, files };
    },
  };
};

/**
 * The counters keep every exchange until reset; at thousands of subtasks the DynamoDB bodies alone
 * would be hundreds of megabytes in the very process whose memory is measured. Every second the
 * exchanges so far are taken (synchronously, so none is lost between the read and the reset) and
 * reduced to what the cost model needs.
 */
const drainer = (stack: Stack) => {
  const dynamodb: CompactExchange[] = [];
  const sqs: Exchange[] = [];
  const compact = createCompactor();
  const drain = () => {
    const ddb = stack.dynamodb.exchanges();
    const queue = stack.sqs.exchanges();
    stack.dynamodb.reset();
    stack.sqs.reset();
    for (const exchange of ddb) dynamodb.push(compact(exchange));
    for (const { requestBody: _request, responseBody: _response, ...exchange } of queue) sqs.push(exchange);
  };
  drain();
  dynamodb.length = 0;
  sqs.length = 0;
  const timer = setInterval(drain, 1000);
  return {
    stop: () => {
      clearInterval(timer);
      drain();
      return { dynamodb, sqs };
    },
  };
};

/** SQS billed requests: every request but empty polls, each 64 KB of payload (sent or received) one more. */
const sqsBilled = (exchanges: readonly Exchange[]) => {
  const byOperation = new Map<string, number>();
  let billed = 0;
  let emptyPolls = 0;
  for (const exchange of exchanges) {
    if (exchange.operation === 'ReceiveMessage' && exchange.nonEmpty !== true) {
      emptyPolls += 1;
      continue;
    }
    const chunks = Math.max(1, Math.ceil(Math.max(exchange.requestBytes, exchange.responseBytes) / SQS_CHUNK_BYTES));
    billed += chunks;
    byOperation.set(exchange.operation, (byOperation.get(exchange.operation) ?? 0) + 1);
  }
  return { billed, emptyPolls, byOperation };
};

interface Measured {
  readonly size: number;
  readonly seconds: number;
  /** How long the Dispatch state took (it writes the manifest and enqueues every subtask; its function times out after 5 minutes). */
  readonly dispatchSeconds: number | undefined;
  /** Child executions the run started: one per batch of a batched round, none inline. */
  readonly childExecutions: number;
  readonly status: string;
  readonly ok: number;
  readonly complete: boolean;
  /** The execution's error and cause when it did not succeed. */
  readonly failure?: string;
  readonly peakRss: { node: number; jvm: number; files: number };
  readonly transitions: number;
  readonly invocations: Record<Role, number>;
  readonly dynamodb: { writes: number; reads: number; writeUnits: number; readUnits: number; byOperation: Map<string, number> };
  readonly sqs: { billed: number; emptyPolls: number; byOperation: Map<string, number> };
  readonly cost: RunCost;
}

type Outcome = { readonly size: number; readonly refused: string } | Measured;

/** Seconds from entering a state to leaving it, the first time the execution did; undefined if it never left. */
const stateSeconds = (events: readonly ExecutionEvent[], name: string): number | undefined => {
  const named = (type: string) => events.find((event) => event.type === type && (event.state as { name?: string } | undefined)?.name === name);
  const entered = named('StateEntered');
  const exited = named('StateExited');
  return entered && exited ? (exited.timestamp - entered.timestamp) / 1000 : undefined;
};

const isMeasured = (outcome: Outcome): outcome is Measured => !('refused' in outcome);

const settledWithin = async (stack: Stack, executionArn: string, ms: number) => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([stack.cloud.executions.settled(executionArn), timeout]);
  } finally {
    clearTimeout(timer);
  }
};

const measure = async (stack: Stack, client: TesseraClient, size: number, label: string): Promise<Outcome> => {
  const body = noOpRunRequest(size, label, DEADLINE_SECONDS);
  const lambdaBefore = stack.cloud.lambdaStats();
  const counted = drainer(stack);
  const memory = memorySampler(stack.dynamodbPid);
  const started = performance.now();
  let runId: string;
  try {
    ({ runId } = await client.createRun(body));
  } catch (error) {
    counted.stop();
    memory.stop();
    if (error instanceof TesseraApiError && error.status === 400) {
      const tooLarge = error.issues.find((issue) => issue.code === 'plan_too_large');
      if (tooLarge) return { size, refused: `plan_too_large (${tooLarge.path}): ${tooLarge.message}` };
    }
    throw error;
  }
  const execution = stack.cloud.executions.executions().find((record) => record.name === runId);
  if (!execution) throw new Error(`run ${runId} started no execution`);
  const ended = await settledWithin(stack, execution.executionArn, DEADLINE_SECONDS * 1000 + GRACE_MS);
  const seconds = (performance.now() - started) / 1000;
  // The last DeleteMessageBatch calls and poller round trips land.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const peakRss = memory.stop();
  const { dynamodb, sqs } = counted.stop();
  if (!ended) throw new Error(`${label}: the execution of run ${runId} had not ended ${DEADLINE_SECONDS + GRACE_MS / 1000} s after it started`);
  const run = await client.getRun(runId);
  const sizes = await finalSizes(stack);
  const rows = compactDynamoRows(dynamodb, sizes);
  const capacity = totalCapacity(rows);
  const invocations = invocationsSince(stack, lambdaBefore);
  const billedSqs = sqsBilled(sqs);
  // A batched round's subtasks run in child executions (named `<runId>-<round>-<batch>`), each
  // billed for its own transitions: the run's are the parent's plus every child's.
  const children = stack.cloud.executions.executions().filter((record) => record.name.startsWith(`${runId}-`));
  const transitions = ended.transitions + children.reduce((sum, child) => sum + child.transitions, 0);
  const cost = costOf({ transitions, invocations, sqsRequests: billedSqs.billed, capacity }, memoryByRole(stack.template));
  const calls = (writes: boolean) => rows.filter((row) => WRITES.has(row.operation) === writes).reduce((sum, row) => sum + row.requests, 0);
  return {
    size,
    seconds,
    dispatchSeconds: stateSeconds(ended.events, STATE_NAMES.dispatch),
    childExecutions: children.length,
    status: `${ended.status}/${run.status}`,
    ...(ended.status === 'SUCCEEDED' ? {} : { failure: `${ended.error ?? ''}: ${(ended.cause ?? '').slice(0, 300)}` }),
    ok: run.progress.byState.ok ?? 0,
    complete: run.answer?.coverage.complete === true,
    peakRss,
    transitions,
    invocations,
    dynamodb: { writes: calls(true), reads: calls(false), ...capacity, byOperation: new Map(rows.map((row) => [row.operation, row.requests])) },
    sqs: billedSqs,
    cost,
  };
};

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const per1000 = (m: Measured, value: number): number => (value * 1000) / m.size;
const ratio = (value: number, reference: number): string => (reference > 0 ? `${fixed(value / reference)}×` : '–');

const printMeasured = (outcomes: readonly Outcome[]): void => {
  const measured = outcomes.filter(isMeasured);
  for (const outcome of outcomes) if (!isMeasured(outcome)) console.log(`\n${outcome.size.toLocaleString('en-US')} subtasks: refused, ${outcome.refused}`);
  if (measured.length === 0) return;
  const reference = measured.find((m) => m.size === 1000) ?? measured[0];
  if (reference === undefined) return;
  const timePer = (m: Measured) => m.seconds / m.size;
  const costPer = (m: Measured) => per1000(m, total(m.cost));

  console.log('\nThroughput and memory (wall time: POST /runs until the execution ended)');
  table(
    [
      'subtasks',
      'path',
      'status',
      'ok',
      'coverage',
      'wall',
      'Dispatch',
      'subtasks/s',
      `ms/subtask`,
      `vs ${reference.size}`,
      'peak RSS node',
      'peak RSS DynamoDB Local',
      'peak open files',
    ],
    measured.map((m) => [
      m.size.toLocaleString('en-US'),
      m.childExecutions === 0 ? 'inline' : `${m.childExecutions} batches`,
      m.status,
      String(m.ok),
      m.complete ? 'complete' : 'INCOMPLETE',
      `${fixed(m.seconds, 1)} s`,
      m.dispatchSeconds === undefined ? 'did not end' : `${fixed(m.dispatchSeconds, 1)} s`,
      fixed(m.size / m.seconds, 1),
      fixed(timePer(m) * 1000, 1),
      ratio(timePer(m), timePer(reference)),
      mb(m.peakRss.node),
      mb(m.peakRss.jvm),
      String(m.peakRss.files),
    ]),
    [1, 2, 4],
  );
  console.log('  peak RSS node: this process, which runs the whole local cloud but DynamoDB Local (handlers, Step Functions, fauxqs, pollers,');
  console.log('  HTTP API) as `tessera serve` does, plus the counting proxies; sampled every 250 ms. DynamoDB Local: its JVM, sampled alike.');
  console.log("  path: inline (one Map in the run's execution), or the batched round's child executions, one per batch (docs/deadlines.md).");
  console.log("  Dispatch: the Dispatch state, entered to exited (it writes the manifest and enqueues every subtask, within its function's timeout).");
  console.log('  peak open files: file descriptors of this process, sockets included (both ends of every loopback connection it holds).');

  console.log('\nAWS calls per subtask (counted on the wire; SQS empty polls excluded)');
  table(
    ['subtasks', 'DynamoDB writes', 'DynamoDB reads', 'WRU', 'RRU', 'SQS billed', 'Lambda', 'transitions', 'empty polls/run'],
    measured.map((m) => {
      const lambda = ROLES.reduce((sum, role) => sum + m.invocations[role], 0);
      return [
        m.size.toLocaleString('en-US'),
        fixed(m.dynamodb.writes / m.size),
        fixed(m.dynamodb.reads / m.size),
        fixed(m.dynamodb.writeUnits / m.size),
        fixed(m.dynamodb.readUnits / m.size),
        fixed(m.sqs.billed / m.size),
        fixed(lambda / m.size),
        fixed(m.transitions / m.size),
        String(m.sqs.emptyPolls),
      ];
    }),
  );
  console.log("  transitions: StateEntered events of the run's execution and of every child execution it started, each billed alike.");
  console.log("  WRU/RRU: DynamoDB request units counted from the requests by DynamoDB's rules (bench/pipeline/model.ts), not reported by DynamoDB Local");
  for (const m of measured) {
    const lambda = ROLES.map((role) => `${role} ${m.invocations[role]}`).join(', ');
    const ops = (byOperation: Map<string, number>) =>
      [...byOperation]
        .sort((a, b) => b[1] - a[1])
        .map(([op, n]) => `${op} ${n}`)
        .join(', ');
    console.log(`  ${m.size}: DynamoDB ${ops(m.dynamodb.byOperation)}; SQS ${ops(m.sqs.byOperation)}; Lambda ${lambda}`);
  }

  console.log(
    `\nCost per 1,000 subtasks (USD, ${PRICES_REGION} list prices, Lambda arm64; docs/deadlines.md gives $${DOCUMENTED_USD_PER_1000.low}–${DOCUMENTED_USD_PER_1000.high} for the small-run path)`,
  );
  table(
    ['subtasks', 'Step Functions', 'Lambda', 'SQS', 'DynamoDB', 'total', `vs ${reference.size}`, 'vs docs'],
    measured.map((m) => [
      m.size.toLocaleString('en-US'),
      ...[m.cost.stepFunctions, m.cost.lambda, m.cost.sqs, m.cost.dynamodb, total(m.cost)].map((value) => usd(per1000(m, value))),
      ratio(costPer(m), costPer(reference)),
      costPer(m) < DOCUMENTED_USD_PER_1000.low ? 'below' : costPer(m) > DOCUMENTED_USD_PER_1000.high ? 'above' : 'within',
    ]),
  );
  console.log(
    `  Lambda GB-seconds at each function's MemorySize from the template and an assumed warm duration per invocation (${ROLES.map((role) => `${role} ${ASSUMED_MS[role].ms} ms`).join(', ')}),`,
  );
  console.log('  as bench/pipeline/model.ts explains; dispatch and reconcile run once per run, so their durations do not move the per-subtask cost.');
  console.log('  Prices:');
  for (const price of Object.values(PRICES)) console.log(`    ${price.text}  [${price.page}]`);

  const worst = (of: (m: Measured) => number) => Math.max(...measured.map((m) => of(m) / of(reference)));
  console.log(
    `\nGoal (issue 14): per-subtask time and cost within 1.3× of the ${reference.size} size. Worst: time ${fixed(worst(timePer))}×, cost ${fixed(worst(costPer))}×.`,
  );
};

/** Prints the figures per size. */
export async function run(): Promise<void> {
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  process.env.POWERTOOLS_TRACE_ENABLED ??= 'false';
  const sizes = sizesFrom(process.argv.slice(2), process.env.SCALE_SIZES);
  console.log(`# Scale: no-op subtasks through the local cloud at ${sizes.map((n) => n.toLocaleString('en-US')).join(', ')}`);
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} at start`,
  );
  const stack = await startStack();
  try {
    const token = await stack.cloud.mintToken({ tenant: TENANT, subject: 'scale-bench' });
    const client = createTesseraClient({ apiUrl: stack.cloud.apiUrl ?? '', token });
    const warmup = await measure(stack, client, WARMUP_SUBTASKS, 'warm-up');
    if (isMeasured(warmup)) console.log(`warm-up: ${WARMUP_SUBTASKS} subtasks in ${fixed(warmup.seconds, 1)} s (the handlers' cold starts; not reported)`);
    const outcomes: Outcome[] = [];
    for (const size of sizes) {
      const outcome = await measure(stack, client, size, `${size}`);
      outcomes.push(outcome);
      console.log(
        isMeasured(outcome)
          ? `${size}: ${outcome.status}, ${outcome.ok} ok, ${fixed(outcome.seconds, 1)} s${outcome.failure ? `; the execution failed: ${outcome.failure}` : ''}`
          : `${size}: refused`,
      );
    }
    printMeasured(outcomes);
  } finally {
    await stack.stop();
  }
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} at the end (2 cores: above 2, other processes share the figures)`,
  );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await run();
}
