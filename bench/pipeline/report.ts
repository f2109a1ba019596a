/** The pipeline benchmark's report: the tables it prints. See bench/pipeline.bench.ts. */
import type { AslStateMachine } from '../../lib/infra/asl';
import { callbackSubtaskCost, pollSubtaskCost, PRICES } from '../deadline-figures';
import { STATE_NAMES } from '../../lib/infra/run-state-machine';
import { SUBTASKS, PER_1000, ROLES, type Role, type Measurement } from './setup';
import {
  ASSUMED_MS,
  type Capacity,
  WRITES,
  PRICED,
  type DynamoRow,
  type SqsSplit,
  type Usage,
  type RunCost,
  total,
  costOf,
  type SubtaskItemUnits,
  iterationUsage,
  measuredIterations,
  times,
  withIterations,
} from './model';

export const fixed = (value: number, digits = 2): string => value.toFixed(digits);
export const usd = (value: number): string => `$${value.toFixed(4)}`;

/** Prints an aligned table: figures right-aligned, the columns named in `text` left-aligned. */
export const table = (header: readonly string[], rows: readonly (readonly string[])[], text: readonly number[] = [0]): void => {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const pad = (cell: string, column: number) => (text.includes(column) ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0));
  const line = (cells: readonly string[]) => `  ${cells.map(pad).join('  ')}`.trimEnd();
  console.log(line(header));
  for (const row of rows) console.log(line(row));
};

export const totalCapacity = (rows: readonly DynamoRow[]): Capacity => ({
  writeUnits: rows.reduce((sum, row) => sum + row.capacity.writeUnits, 0),
  readUnits: rows.reduce((sum, row) => sum + row.capacity.readUnits, 0),
});

const callsOf = (rows: readonly DynamoRow[], writes: boolean): number =>
  rows.filter((row) => WRITES.has(row.operation) === writes).reduce((sum, row) => sum + row.requests, 0);

export const printDynamo = (rows: readonly DynamoRow[]): void => {
  console.log('\nDynamoDB (calls by operation; capacity estimated from item sizes: DynamoDB Local does not bill)');
  table(
    ['operation', 'calls/run', 'calls/subtask', 'items/run', 'refused', 'consistent reads', 'WRU/subtask', 'RRU/subtask'],
    rows.map((row) => {
      const units = (value: number) => (PRICED.has(row.operation) ? fixed(value / SUBTASKS) : '?');
      return [
        row.operation,
        String(row.requests),
        fixed(row.requests / SUBTASKS),
        String(row.items),
        String(row.errors),
        WRITES.has(row.operation) ? '–' : String(row.consistent),
        units(row.capacity.writeUnits),
        units(row.capacity.readUnits),
      ];
    }),
  );
  console.log('  items: entries of a transaction or batch, items a Query returned; refused: conditional writes DynamoDB turned down (billed all the same)');
  console.log(
    '  capacity: 1 WRU per started KB written (a Put by its item; an Update by the larger of its item before and after, a ConditionCheck by its item then),',
  );
  console.log(
    '  2 per transactional item (ConditionCheck included); 1 RRU per started 4 KB strongly consistent, 0.5 eventually consistent, 2 per TransactGet item',
  );
};

export const billedRequests = (split: SqsSplit): number => split.billed.reduce((sum, row) => sum + row.requests, 0);

export const printSqs = (split: SqsSplit): void => {
  console.log('\nSQS (requests by operation)');
  table(
    ['operation', 'requests/run', 'requests/subtask', 'messages or entries/run'],
    split.billed.map((row) => [row.operation, String(row.requests), fixed(row.requests / SUBTASKS), String(row.items)]),
  );
  console.log(`  empty polls, excluded from the cost: ${split.emptyPolls} ReceiveMessage calls came back empty while the run was counted. They follow`);
  console.log("  the local pollers' cadence (1-s long polls, 5 pollers per queue, one queue per worker kind); an AWS event-source mapping polls");
  console.log('  an idle queue on its own schedule whether runs happen or not: a standing cost of the deployment, not of a subtask.');
};

export const printLambda = (invocations: Record<Role, number>, memory: Record<Role, number>): void => {
  console.log('\nLambda (invocations by function)');
  table(
    ['function', 'invocations/run', 'per subtask', 'memory MB', 'assumed ms', 'why that duration'],
    ROLES.map((role) => [
      role,
      String(invocations[role]),
      fixed(invocations[role] / SUBTASKS),
      String(memory[role]),
      String(ASSUMED_MS[role].ms),
      ASSUMED_MS[role].why,
    ]),
    [0, 5],
  );
  const count = ROLES.reduce((sum, role) => sum + invocations[role], 0);
  console.log(`  total: ${count} invocations per run = ${fixed(count / SUBTASKS)} per subtask`);
  console.log('  durations are assumed (warm, arm64): locally every handler shares one process with the emulators, so measured times say nothing about AWS');
};

export const printTransitions = (
  transitions: number,
  machines: readonly AslStateMachine[],
  iteration: AslStateMachine,
  entered: ReadonlyMap<string, number>,
): void => {
  const inside = Object.keys(iteration.States);
  // In the order the execution first entered them.
  const perState = (states: readonly string[]) =>
    [...entered]
      .filter(([state]) => states.includes(state))
      .map(([state, count]) => `${state} ${count}`)
      .join(', ');
  const iterations = inside.reduce((sum, state) => sum + (entered.get(state) ?? 0), 0);
  const waited = entered.get(STATE_NAMES.await) ?? 0;
  const callback = callbackSubtaskCost(iteration);
  console.log('\nStep Functions (Standard workflow: billed per state transition, i.e. per state entered)');
  console.log(`  ${transitions} per run = ${fixed(transitions / SUBTASKS)} per subtask`);
  console.log(
    `  outside the iterations (the run's execution, then each batch's): ${transitions - iterations} (${perState(machines.flatMap((m) => Object.keys(m.States)))})`,
  );
  console.log(`  in the ${SUBTASKS} iterations: ${iterations} (${perState(inside)})`);
  console.log(`  ${SUBTASKS - waited} iterations found their no-op subtask already finished at Arm: Arm → IsSubtaskOpen → SubtaskDone (3);`);
  console.log(`  ${waited} waited for the worker: ${callback.path.join(' → ')} (${callback.transitions}; Await ends the iteration itself).`);
};

export const printPrices = (): void => {
  console.log('\nPrices used (us-east-1, published; excluded: API Gateway, CloudWatch Logs and metrics, X-Ray, data transfer, free tiers)');
  for (const price of Object.values(PRICES)) console.log(`  ${price.text}  [${price.source}, ${price.page}]`);
};

const COST_HEADER = ['workload', 'design', 'Step Functions', 'Lambda', 'SQS', 'DynamoDB', 'total', 'vs callback'] as const;

const costRow = (workload: string, design: string, cost: RunCost, reference: RunCost): string[] => [
  workload,
  design,
  ...[cost.stepFunctions, cost.lambda, cost.sqs, cost.dynamodb, total(cost)].map((value) => usd(value * PER_1000)),
  `${fixed(total(cost) / total(reference))}×`,
];

interface Comparison {
  readonly usage: Usage;
  readonly memory: Record<Role, number>;
  readonly entered: ReadonlyMap<string, number>;
  readonly iteration: AslStateMachine;
  readonly units: SubtaskItemUnits;
}

const POLL_INTERVALS = [5, 1] as const;
const SUBTASK_SECONDS = [10, 60, 300] as const;

/**
 * The measured run, the poll loop on the same no-op work (only iterations that waited change), and
 * longer subtasks under either design, where every iteration waits.
 */
const comparisonRows = (c: Comparison): string[][] => {
  const callback = iterationUsage(callbackSubtaskCost(c.iteration), c.units);
  const measured = measuredIterations(c.entered, Object.keys(c.iteration.States), c.usage.invocations.deadline, c.units);
  const waited = c.entered.get(STATE_NAMES.await) ?? 0;
  const cost = (usage: Usage) => costOf(usage, c.memory);
  const base = cost(c.usage);
  const rows = [costRow(`no-op (measured; ${waited} of ${SUBTASKS} waited)`, 'callback', base, base)];
  for (const k of POLL_INTERVALS) {
    const poll = iterationUsage(pollSubtaskCost(c.iteration, 1, k), c.units);
    rows.push(costRow('', `poll ${k} s`, cost(withIterations(c.usage, times(callback, waited), times(poll, waited))), base));
  }
  for (const seconds of SUBTASK_SECONDS) {
    const reference = cost(withIterations(c.usage, measured, times(callback, SUBTASKS)));
    rows.push(costRow(`${seconds}-s subtasks`, 'callback', reference, reference));
    for (const k of POLL_INTERVALS) {
      const poll = iterationUsage(pollSubtaskCost(c.iteration, seconds, k), c.units);
      rows.push(costRow('', `poll ${k} s`, cost(withIterations(c.usage, measured, times(poll, SUBTASKS))), reference));
    }
  }
  return rows;
};

export const printComparison = (c: Comparison): void => {
  console.log(`\nOrchestration cost per 1,000 subtasks (USD; ${PER_1000} runs like the measured one), and the poll-loop baseline`);
  table(COST_HEADER, comparisonRows(c), [0, 1]);
  console.log('  callback: the Map waits on a task token (what tessera builds); poll k s: Wait k s → Arm → IsSubtaskOpen until done (docs/deadlines.md).');
  console.log('  Longer subtasks: every iteration waits (Arm → IsSubtaskOpen → Await, or k-s checks), the rest as measured;');
  console.log("  the worker's own run time is the product's cost, not orchestration, so both designs keep the no-op worker's calls.");
};

export const printSummary = (m: Measurement, rows: readonly DynamoRow[], sqs: SqsSplit, checkpoints: number): void => {
  const capacity = totalCapacity(rows);
  const consistent = rows.reduce((sum, entry) => sum + entry.consistent, 0);
  const invocations = ROLES.reduce((sum, role) => sum + m.invocations[role], 0);
  const row = (service: string, perRun: number, note: string) => [service, fixed(perRun / SUBTASKS), String(perRun), note];
  console.log(`\nAWS calls per subtask (the measured run ÷ ${SUBTASKS})`);
  table(
    ['service', 'per subtask', 'per run', 'note'],
    [
      row('DynamoDB writes', callsOf(rows, true), `${fixed(capacity.writeUnits / SUBTASKS)} WRU per subtask (estimated)`),
      row(
        'Checkpoint writes',
        checkpoints,
        'of the writes above: one conditional UpdateItem of the subtask item each (≤64 KiB, so ≤64 WRU), at most 32 a subtask',
      ),
      row(
        'DynamoDB reads',
        callsOf(rows, false),
        `${fixed(capacity.readUnits / SUBTASKS)} RRU per subtask (estimated); ${consistent} of ${callsOf(rows, false)} strongly consistent`,
      ),
      row('SQS requests', billedRequests(sqs), `besides ${sqs.emptyPolls} empty polls, excluded`),
      row('Lambda invocations', invocations, ROLES.map((role) => `${role} ${m.invocations[role]}`).join(', ')),
      row('State transitions', m.transitions, "Standard workflow, from the event logs of the run's execution and its children"),
    ],
    [0, 3],
  );
};
