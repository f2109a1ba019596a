/**
 * Prints what the CDK construct needs to know of a worker module at synth time, as one JSON line
 * `{"export":"registry","kinds":["tax-statements",…]}`; or the problem on stderr, exit 1.
 * The construct runs it in a child process (constructs are synchronous; importing a module is not):
 * `node --import tsx lib/infra/print-worker-module.ts /abs/path/to/workers.ts`.
 */
import { pathToFileURL } from 'node:url';
import { registryExportOf } from '../workers/worker-module';

const [path] = process.argv.slice(2);
try {
  if (!path) throw new Error('usage: print-worker-module.ts /abs/path/to/workers.ts');
  const module: unknown = await import(pathToFileURL(path).href);
  const exportName = registryExportOf(module, path);
  const registry = (module as Record<string, { kinds(): readonly string[] }>)[exportName];
  process.stdout.write(`${JSON.stringify({ export: exportName, kinds: registry?.kinds() ?? [] })}\n`);
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exitCode = 1;
}
