import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * Runs every `bench/*.bench.ts` in sequence (never in parallel: figures from concurrent
 * benchmarks measure each other). Each file exports `run(): Promise<void>` and prints its own
 * figures beside a baseline measured in the same process. `npm run bench -- reconcile` runs
 * only the files whose name contains `reconcile`.
 */

const here = dirname(fileURLToPath(import.meta.url));
const filters = process.argv.slice(2);

const isBenchmark = (value: unknown): value is { run: () => Promise<void> } =>
  typeof value === 'object' && value !== null && typeof Reflect.get(value, 'run') === 'function';

const files = readdirSync(here)
  .filter((name) => name.endsWith('.bench.ts'))
  .filter((name) => filters.length === 0 || filters.some((f) => name.includes(f)))
  .sort();

for (const name of files) {
  const module: unknown = await import(pathToFileURL(join(here, name)).href);
  if (!isBenchmark(module)) throw new Error(`${name} must export async function run(): Promise<void>`);
  console.log(`\n## ${name}`);
  await module.run();
}
