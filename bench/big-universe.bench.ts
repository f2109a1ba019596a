/**
 * A run over a universe of 100,000 ids, split into two parts, on the local cloud: the wall time
 * from `POST /runs` to the finished run, the ledger items it leaves (and how many are parts of
 * large attributes, `docs/ledger.md`, "Parts"), and the size of `GET /runs/{runId}` as JSON and
 * compressed. The workers are `chaos` with `report: 'count'`: they read every assigned id and
 * leave seven unobserved, so the coverage names seven missing ids.
 *
 * The baseline, measured in the same process: the same pipeline for a 2,000-id universe, so the
 * figure separates the cost of the ids from the cost of a run.
 *
 * Run alone: `npx tsx bench/big-universe.bench.ts`; `npm run bench -- big-universe` runs it through the index.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { createTesseraClient } from '../lib/client';
import type { RunRequestInput } from '../lib/contract';
import { exampleWorkerModule } from '../examples/app/cdk';
import { startTesseraCloud } from '../lib/local/tessera-cloud';

const TENANT = 'bench';
const ABSENT = ['acct-000007', 'acct-000123', 'acct-012345', 'acct-049999', 'acct-050000', 'acct-077777', 'acct-099999'];

const request = (count: number): RunRequestInput => ({
  goal: `Which of our ${count} accounts can the source read?`,
  universe: { dimension: 'ids', ids: Array.from({ length: count }, (_, i) => `acct-${String(i).padStart(6, '0')}`), noun: 'account' },
  split: { worker: 'chaos', parts: 2, input: { absent: ABSENT, report: 'count' }, deadlineSeconds: 300, budget: { modelCalls: 1, estimatedCostPerCall: 0 } },
  policy: { retry: { timed_out: 0, invalid: 0, empty: 0 }, onOptionalGap: 'degrade', maxRounds: 1 },
  budget: { modelCalls: 2, costLimit: 1 },
});

interface Figures {
  readonly ids: number;
  readonly wallMs: number;
  readonly items: number;
  readonly parts: number;
  readonly storedBytes: number;
  readonly getJsonBytes: number;
  readonly getGzipBytes: number;
  readonly status: string;
  readonly missing: number;
}

export const run = async (): Promise<void> => {
  // The runs use the chaos kind, which only the example app's fault-workers module registers.
  const cloud = await startTesseraCloud({ workers: exampleWorkerModule({ faultInjection: true }), functionLogLevel: 'ERROR' });
  try {
    const tessera = createTesseraClient({ apiUrl: cloud.apiUrl ?? '', token: await cloud.mintToken({ tenant: TENANT, subject: 'bench' }) });
    const table = cloud.resources.tables[0]?.tableName ?? '';
    const ddb = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: cloud.endpoints.dynamodb, region: cloud.region }));
    const measure = async (count: number): Promise<Figures> => {
      const started = performance.now();
      const { runId } = await tessera.createRun(request(count));
      const finished = await tessera.waitForRun(runId, { intervalMs: 250, timeoutMs: 600_000 });
      const wallMs = performance.now() - started;
      const items: Record<string, unknown>[] = [];
      let start: Record<string, unknown> | undefined;
      do {
        const page = await ddb.send(
          new QueryCommand({
            TableName: table,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': `T#${TENANT}#R#${runId}` },
            ExclusiveStartKey: start,
          }),
        );
        items.push(...(page.Items ?? []));
        start = page.LastEvaluatedKey;
      } while (start !== undefined);
      const size = (item: Record<string, unknown>) =>
        Buffer.byteLength(JSON.stringify(item, (_k, v: unknown) => (v instanceof Uint8Array ? 'x'.repeat(v.byteLength) : v)));
      const json = JSON.stringify(finished);
      return {
        ids: count,
        wallMs,
        items: items.length,
        parts: items.filter((item) => String(item.sk).startsWith('PART#')).length,
        storedBytes: items.reduce((sum, item) => sum + size(item), 0),
        getJsonBytes: Buffer.byteLength(json),
        getGzipBytes: gzipSync(json).length,
        status: finished.status,
        missing: finished.answer?.coverage.gaps.reduce((sum, gap) => sum + (gap.ids?.length ?? 0), 0) ?? -1,
      };
    };
    const baseline = await measure(2_000);
    const big = await measure(100_000);
    const row = (f: Figures) =>
      `| ${f.ids.toLocaleString('en')} | ${f.status} | ${(f.wallMs / 1000).toFixed(1)} s | ${f.items} (${f.parts} parts) | ${(f.storedBytes / 1e6).toFixed(2)} MB | ${(f.getJsonBytes / 1e6).toFixed(2)} MB | ${(f.getGzipBytes / 1e6).toFixed(2)} MB | ${f.missing} |`;
    console.log('| universe ids | status | POST → finished | ledger items | stored (approx.) | GET as JSON | GET gzip | missing ids named |');
    console.log('|---|---|---|---|---|---|---|---|');
    console.log(row(baseline));
    console.log(row(big));
  } finally {
    await cloud.stop();
  }
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run();
