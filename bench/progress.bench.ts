/**
 * Progress for a caller waiting on a run, three ways, on the local cloud: today's interval
 * polling (`GET /runs/{runId}` every 500 ms), ETag polling (the same, with `If-None-Match`:
 * unchanged reads are 304 without a body), and the long-poll (`If-None-Match` + `Prefer: wait=20`,
 * what `waitForRun` does). For each: requests per run, bodies downloaded, and notice latency, the
 * time from a subtask's state change (its `claimedAt`/`finishedAt`/`sealedAt`/`closedAt` in the
 * ledger, stamped by the same process clock) to the first read that shows it.
 *
 * `npm run bench -- progress`. One run of examples/tax-2025.json (five subtasks over two rounds)
 * per way, one after another.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { exampleWorkerModule } from '../examples/app/cdk';
import { createTesseraClient, type TesseraClient } from '../lib/client';
import type { RunResource } from '../lib/contract';
import { startTesseraCloud } from '../lib/local/tessera-cloud';

const INTERVAL_MS = 500;

interface Observation {
  readonly at: number;
  readonly states: ReadonlyMap<string, string>;
}

interface Tally {
  requests: number;
  bodies: number;
  readonly seen: Observation[];
}

const record = (tally: Tally, run: RunResource): void => {
  tally.seen.push({ at: Date.now(), states: new Map(run.subtasks.map((s) => [s.id, s.state])) });
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Strategy = (client: TesseraClient, runId: string, tally: Tally) => Promise<void>;

const interval: Strategy = async (client, runId, tally) => {
  for (;;) {
    const run = await client.getRun(runId);
    tally.requests += 1;
    tally.bodies += 1;
    record(tally, run);
    if (run.status !== 'running' && run.answer !== null) return;
    await sleep(INTERVAL_MS);
  }
};

/**
 * Conditional reads with the last ETag: a 304 carries no body. With `waitSeconds` each read is a
 * long-poll that the API holds until the run changes; without it, reads are spaced by the interval.
 */
const conditional =
  (waitSeconds?: number): Strategy =>
  async (client, runId, tally) => {
    let etag: string | undefined;
    let last: RunResource | undefined;
    for (;;) {
      const read = await client.getRun(runId, etag === undefined ? {} : { ifNoneMatch: etag, ...(waitSeconds === undefined ? {} : { waitSeconds }) });
      tally.requests += 1;
      if (read.modified) {
        tally.bodies += 1;
        last = read.run;
        record(tally, read.run);
      }
      etag = read.etag;
      if (last !== undefined && last.status !== 'running' && last.answer !== null) return;
      if (waitSeconds === undefined) await sleep(INTERVAL_MS);
    }
  };

/** Each state change of each subtask, from the ledger: `[subtaskId, state, instant]`. */
const stateChanges = async (db: DynamoDBDocumentClient, tableName: string, tenant: string, runId: string): Promise<[string, string, number][]> => {
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sub)',
      ExpressionAttributeValues: { ':pk': `T#${encodeURIComponent(tenant)}#R#${encodeURIComponent(runId)}`, ':sub': 'SUB#' },
    }),
  );
  return Items.flatMap((item) => {
    const id = String(item.subtaskId);
    const changes: [string, string, number][] = [];
    if (item.claimedAt && item.state !== 'pending') changes.push([id, 'running', Date.parse(String(item.claimedAt))]);
    const ended = item.finishedAt ?? item.sealedAt ?? item.closedAt;
    if (ended) changes.push([id, String(item.state), Date.parse(String(ended))]);
    return changes;
  });
};

/** Notice latency of each change: first observation showing the state (or a later one) after it happened. */
const latencies = (changes: readonly [string, string, number][], seen: readonly Observation[]): number[] =>
  changes.flatMap(([id, state, at]) => {
    const first = seen.find(
      (observation) =>
        observation.at >= at &&
        (observation.states.get(id) === state || (state === 'running' && observation.states.get(id) !== 'pending' && observation.states.has(id))),
    );
    return first === undefined ? [] : [first.at - at];
  });

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : (sorted[Math.floor((sorted.length - 1) / 2)] as number);
};

export const run = async (): Promise<void> => {
  const cloud = await startTesseraCloud({ workers: exampleWorkerModule({ faultInjection: false }), functionLogLevel: 'ERROR' });
  try {
    const tenant = 'bench';
    const token = await cloud.mintToken({ tenant, subject: 'bench' });
    const client = createTesseraClient({ apiUrl: cloud.apiUrl ?? '', token });
    const table = cloud.resources.tables[0];
    if (table === undefined) throw new Error('the local cloud provisioned no table');
    const db = DynamoDBDocumentClient.from(
      new DynamoDBClient({ endpoint: cloud.endpoints.dynamodb, region: cloud.region, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
    );
    const request: unknown = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'examples', 'tax-2025.json'), 'utf8'));
    const rows: string[] = [];
    for (const [name, strategy] of [
      [`interval polling (${INTERVAL_MS} ms)`, interval],
      [`ETag polling (${INTERVAL_MS} ms, If-None-Match)`, conditional()],
      ['long-poll (If-None-Match + Prefer: wait=20)', conditional(20)],
    ] as const) {
      const { runId } = await client.createRun(request as never);
      const tally: Tally = { requests: 0, bodies: 0, seen: [] };
      const started = Date.now();
      await strategy(client, runId, tally);
      const changes = await stateChanges(db, table.tableName, tenant, runId);
      const notice = latencies(changes, tally.seen);
      rows.push(
        `${name.padEnd(46)} ${String(tally.requests).padStart(4)} requests  ${String(tally.bodies).padStart(3)} bodies  notice median ${String(median(notice)).padStart(4)} ms, max ${String(Math.max(...notice)).padStart(4)} ms over ${notice.length} changes  (run ${Date.now() - started} ms)`,
      );
    }
    console.log('progress of one tax-2025 run (5 subtasks, 2 rounds) on the local cloud:');
    for (const row of rows) console.log(`  ${row}`);
  } finally {
    await cloud.stop();
  }
};
