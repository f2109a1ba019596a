/**
 * What reading a large run costs whole, and a page at a time: for runs of 1,000 and 5,000
 * subtasks on DynamoDB Local, the read capacity of the whole-run read behind `GET /runs/{runId}`
 * beside one page of `GET /runs/{runId}/subtasks` (first and middle page, 100 each), and the JSON
 * size of the run resource whole, paged (`?subtasks=page`) and small (`?subtasks=none`).
 *
 * Read capacity is DynamoDB Local's `ConsumedCapacity` for GetItem and Query (strongly consistent:
 * 1 RCU per 4 KB, a Query's items summed before rounding), which it reports by DynamoDB's rules;
 * only its figures for transactions are unreliable (see ledger.bench.ts), and none are read here.
 * The subtasks are authored, pending, about 500 bytes each stored: a run whose subtasks carry
 * outcomes is larger (about 930 bytes a subtask in the resource), and every figure grows with it.
 *
 * Run alone: `npm run bench -- subtask-pages`.
 */
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { pathToFileURL } from 'node:url';
import { shapeRun } from '../lib/application/list-subtasks';
import type { DispatchedSubtask } from '../lib/contract';
import { createLedger, ledgerTableDefinition, toRunResource } from '../lib/ledger';
import { startDynamoDbLocal } from '../lib/local/dynamodb-local';

const SIZES = [1000, 5000] as const;
const PAGE = 100;

/** Subtask n of a run over the ids `account-1` …: one id each, pending. */
const subtask = (index: number): DispatchedSubtask => ({
  id: `s-${index + 1}`,
  worker: 'tax-statements',
  round: 1,
  questionIds: [],
  required: false,
  assigned: { ids: [`account-${index + 1}`] },
  deadline: '2040-06-01T13:00:00.000Z',
  budget: { modelCalls: 4, estimatedCostPerCall: 7 },
});

/** Prints the figures. */
export async function run(): Promise<void> {
  const local = await startDynamoDbLocal();
  try {
    const base = new DynamoDBClient({ endpoint: local.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const tableName = 'tessera-subtask-pages-bench';
    await base.send(new CreateTableCommand(ledgerTableDefinition(tableName)));
    const client = DynamoDBDocumentClient.from(base, { marshallOptions: { removeUndefinedValues: true } });
    let rcu = 0;
    client.middlewareStack.add(
      (next) => async (args) => {
        (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'TOTAL';
        const result = await next(args);
        rcu += (result.output as { ConsumedCapacity?: { CapacityUnits?: number } }).ConsumedCapacity?.CapacityUnits ?? 0;
        return result;
      },
      { step: 'initialize', name: 'readCapacity' },
    );
    const ledger = createLedger({ client, tableName, now: () => Date.parse('2040-06-01T12:00:00.000Z') });
    const measured = async (read: () => Promise<unknown>): Promise<number> => {
      rcu = 0;
      await read();
      return rcu;
    };

    console.log('# A large run read whole and a page at a time (DynamoDB Local, strongly consistent reads)');
    console.log('subtasks | whole run (GET /runs/{runId}) | first page of 100 | page of 100 in the middle | resource JSON whole / page / none');
    for (const size of SIZES) {
      const tenantId = 'bench';
      const runId = `run-${size}`;
      const ids = Array.from({ length: size }, (_, index) => `account-${index + 1}`);
      await ledger.createRun({
        tenantId,
        runId,
        request: {
          goal: `${size} accounts`,
          universe: { dimension: 'ids', ids },
          subtasks: [{ id: 'all', worker: 'tax-statements', scope: { ids }, deadlineSeconds: 60, budget: { modelCalls: 4, estimatedCostPerCall: 7 } }],
          budget: { modelCalls: 10, costLimit: 100 },
        },
      });
      await ledger.appendRound({ tenantId, runId, round: 1, subtasks: Array.from({ length: size }, (_, index) => subtask(index)) });
      const whole = await measured(() => ledger.getRun(tenantId, runId));
      const first = await measured(() => ledger.subtaskPage({ tenantId, runId, limit: PAGE }));
      const middle = await measured(() => ledger.subtaskPage({ tenantId, runId, limit: PAGE, after: `s-${size / 2}` }));
      const record = await ledger.getRun(tenantId, runId);
      if (record === undefined) throw new Error('the run was just written');
      const resource = toRunResource(record);
      const bytes = (form: 'page' | 'none' | undefined) =>
        Buffer.byteLength(JSON.stringify(shapeRun(resource, tenantId, form, { pagedAbove: Number.MAX_SAFE_INTEGER })));
      const kb = (n: number) => `${(n / 1024).toFixed(0)} KB`;
      console.log(`${size} | ${whole} RCU | ${first} RCU | ${middle} RCU | ${kb(bytes(undefined))} / ${kb(bytes('page'))} / ${kb(bytes('none'))}`);
    }
  } finally {
    await local.stop();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await run();
}
