import { appendFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

/**
 * Where the local cloud and the CLI record how long each phase of their start (and of a run)
 * took: when this environment variable names a file, every phase appends one JSON line
 * ({@link TracedPhase}) to it. Unset, nothing is measured or written. The local benchmark
 * (bench/local.bench.ts) sets it; nothing else reads the file.
 */
export const STARTUP_TRACE_ENV = 'TESSERA_STARTUP_TRACE';

/** One traced phase; times are milliseconds since this process started. */
export interface TracedPhase {
  readonly phase: string;
  readonly pid: number;
  readonly startMs: number;
  readonly endMs: number;
}

const traceFile = (): string | undefined => process.env[STARTUP_TRACE_ENV] || undefined;

/**
 * Records a phase that started at `startMs` (from `performance.now()`, which counts from the
 * process start) and ends now.
 *
 * @example
 * const started = performance.now(); await work(); recordPhase('tables', started);
 */
export const recordPhase = (phase: string, startMs: number, endMs: number = performance.now()): void => {
  const file = traceFile();
  if (file === undefined) return;
  const line: TracedPhase = { phase, pid: process.pid, startMs: Math.round(startMs), endMs: Math.round(endMs) };
  try {
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  } catch {
    // A trace is a measurement aid: failing to write it must never fail the cloud.
  }
};

/**
 * Runs `work` and records it as `phase` (when tracing is on).
 *
 * @example
 * const tables = await tracePhase('dynamodb.tables', () => provisionTables(resolver, client));
 */
export const tracePhase = async <T>(phase: string, work: () => Promise<T> | T): Promise<T> => {
  const started = performance.now();
  try {
    return await work();
  } finally {
    recordPhase(phase, started);
  }
};
