import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { WorkerKind } from '../contract';
import type { RegistryExport } from '../workers/worker-module';
import { packageModule, PACKAGE_ROOT } from './handler-metadata';

/** What synthesis knows of a worker module: which export holds the registry, and its kinds in order. */
export interface WorkerModuleSummary {
  readonly exportName: RegistryExport;
  readonly kinds: readonly string[];
}

const Printed = z.object({ export: z.enum(['registry', 'default']), kinds: z.array(WorkerKind) });

/** A worker module that cannot be read at synth time; `problem` is the one-line reason. */
export class WorkerModuleUnreadable extends Error {
  override readonly name = 'WorkerModuleUnreadable';
  constructor(readonly problem: string) {
    super(problem);
  }
}

const cache = new Map<string, WorkerModuleSummary>();

/** Extensions Node cannot load without a TypeScript loader. */
const TYPESCRIPT = /\.(ts|mts|cts|tsx)$/;

/**
 * The `--import` arguments that let the child read the module: tsx's loader when it is installed
 * (an optional peer of this package), none otherwise; a TypeScript module without tsx cannot be
 * read, and says how to fix it.
 */
const loaderArgs = (absolutePath: string): string[] => {
  try {
    return ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href];
  } catch {
    if (TYPESCRIPT.test(absolutePath)) throw new WorkerModuleUnreadable('it is TypeScript, and reading it at synth time needs tsx: npm install --save-dev tsx');
    return [];
  }
};

/**
 * Reads a worker module's registry at synth time, in a child Node process, with tsx's loader when
 * tsx is installed (CDK constructs are synchronous, importing a module is not). Cached per path and modification
 * time, so a test file that synthesizes many stacks pays for one child process.
 *
 * @example
 * readWorkerModule('/home/me/app/src/workers.ts') // { exportName: 'registry', kinds: ['invoices'] }
 */
export const readWorkerModule = (absolutePath: string): WorkerModuleSummary => {
  const key = `${absolutePath}@${statSync(absolutePath).mtimeMs}`;
  const cached = cache.get(key);
  if (cached) return cached;
  const script = join(PACKAGE_ROOT, packageModule('lib/infra/print-worker-module'));
  const child = spawnSync(process.execPath, [...loaderArgs(absolutePath), script, absolutePath], { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (child.error) throw new WorkerModuleUnreadable(`cannot start node to read it: ${child.error.message}`);
  const lines = child.stderr.trim().split('\n').filter(Boolean);
  if (child.status !== 0) throw new WorkerModuleUnreadable(lines.at(-1) ?? `reading it exited with status ${child.status}`);
  const printed = Printed.safeParse(
    (() => {
      try {
        return JSON.parse(child.stdout.trim().split('\n').at(-1) ?? '');
      } catch {
        return undefined;
      }
    })(),
  );
  if (!printed.success) throw new WorkerModuleUnreadable(`its registry could not be read: ${z.prettifyError(printed.error)}`);
  const summary = { exportName: printed.data.export, kinds: printed.data.kinds };
  cache.set(key, summary);
  return summary;
};
