/**
 * 1,000 randomized contention trials of leased tenant-day allowances on DynamoDB Local
 * (`test/ledger/lease-trials.ts` says what a trial does and checks). The test suite runs 100 of
 * them; this runs 1,000 from seed 1, 16 trials at a time on distinct tenants of one table, and
 * prints how long they took and any trial whose invariants broke (with its seed, to reproduce).
 *
 * `npm run bench -- leases`, or alone: `npx tsx bench/leases.bench.ts [trials] [parallel]`.
 */
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { pathToFileURL } from 'node:url';
import { ledgerTableDefinition } from '../lib/ledger';
import { startDynamoDbLocal } from '../lib/local/dynamodb-local';
import { runTrials } from '../test/ledger/lease-trials';

export async function run(trials = 1_000, parallel = 16): Promise<void> {
  const local = await startDynamoDbLocal();
  try {
    const base = new DynamoDBClient({ endpoint: local.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const tableName = 'tessera-leases-bench';
    await base.send(new CreateTableCommand(ledgerTableDefinition(tableName)));
    const client = DynamoDBDocumentClient.from(base, { marshallOptions: { removeUndefinedValues: true } });
    const started = performance.now();
    const results = await runTrials(client, tableName, trials, 1, parallel);
    const seconds = (performance.now() - started) / 1000;
    const failed = results.filter((result) => result.problems.length > 0);
    const sum = (pick: (r: (typeof results)[number]) => number) => results.reduce((total, r) => total + pick(r), 0);
    console.log('# Leased allowances: randomized contention trials on DynamoDB Local');
    console.log(`  ${trials} trials, ${parallel} at a time: ${seconds.toFixed(1)} s (${((seconds * 1000) / trials).toFixed(0)} ms per trial)`);
    console.log(
      `  reservations granted ${sum((r) => r.reservations)}, refused ${sum((r) => r.refusals)}; trials spanning two days ${results.filter((r) => r.days > 1).length}`,
    );
    console.log(`  trials with a broken invariant: ${failed.length}`);
    for (const failure of failed.slice(0, 10)) console.log(`    seed ${failure.seed}: ${failure.problems.slice(0, 3).join('; ')}`);
    if (failed.length > 0) process.exitCode = 1;
  } finally {
    await local.stop();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [trials, parallel] = process.argv.slice(2).map(Number);
  await run(trials || undefined, parallel || undefined);
}
