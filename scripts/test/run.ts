/**
 * `npm test`'s test runner: the vitest projects of vitest.config.ts in two streams that run side by
 * side, because the two halves of the slow suites are short of different things.
 *
 * - First the unit project, pure CPU, one file per core, beside the typecheck (`tsc --noEmit`).
 * - Then the two streams of scripts/test/streams.ts at once: the data plane (integration, then
 *   audit), mostly CPU, beside the cloud (e2e and browser, then chaos), mostly waiting on deadlines.
 *
 *   Each stream still runs one file at a time (the projects' `maxWorkers: 1`), so no two files of
 *   one stream ever race each other's deadlines or share an emulator; only the two streams overlap.
 *   One vitest with two workers over both would pair any two files, two CPU-bound ones included.
 *
 * Every line a stream prints comes with its name in front (`[cloud] ✓ |e2e| …`), and each stream's
 * end is one line with its time (`test: cloud passed in 412 s`), so a CI log shows which stream
 * held the run up. With TESSERA_TEST_RESULTS set, each vitest writes its JSON results beside that
 * file and this runner merges them into it, so a CI reads one report. The exit status is 1 when any stream failed; every
 * stream runs to its end either way, as one vitest would.
 *
 * With arguments (`npm test -- test/domain`), it is the typecheck, then plain `vitest run` with
 * them. TESSERA_TEST_STREAMS=1 runs the typecheck, then the projects in one vitest, one stream
 * after the other.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { STAGES, type Stream } from './streams';

const root = resolve(import.meta.dirname, '..', '..');
const vitest = join(root, 'node_modules', '.bin', 'vitest');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const resultsFile = process.env.TESSERA_TEST_RESULTS;

const resultsOf = (stream: Stream): string | undefined =>
  resultsFile === undefined ? undefined : join(dirname(resultsFile), `vitest-${stream.name.replace(/\W+/g, '-')}.json`);

/** Runs one command; with `prefix`, each of its lines is printed behind the stream's name. */
const spawned = (command: string, args: readonly string[], env: NodeJS.ProcessEnv, prefix?: string): Promise<number> =>
  new Promise((done) => {
    const child = spawn(command, args, { cwd: root, env, stdio: prefix === undefined ? 'inherit' : ['ignore', 'pipe', 'pipe'] });
    if (prefix !== undefined) {
      for (const [from, to] of [
        [child.stdout, process.stdout],
        [child.stderr, process.stderr],
      ] as const) {
        if (from) createInterface({ input: from }).on('line', (line) => to.write(`[${prefix}] ${line}\n`));
      }
    }
    child.on('error', (error) => {
      console.error(`test: could not start ${command}: ${error.message}`);
      done(1);
    });
    child.on('close', (code, signal) => done(code ?? (signal ? 1 : 0)));
  });

/** Runs `vitest run` with `args`. */
const run = (args: readonly string[], env: NodeJS.ProcessEnv, prefix?: string): Promise<number> => spawned(vitest, ['run', ...args], env, prefix);

/** Runs one stream: its npm script, or one vitest over its projects. */
const runStream = (stream: Stream, env: NodeJS.ProcessEnv, prefix?: string): Promise<number> =>
  stream.script === undefined
    ? run(
        stream.projects.flatMap((project) => ['--project', project]),
        env,
        prefix,
      )
    : spawned(npm, ['run', '--silent', stream.script], env, prefix);

/** The streams that are npm scripts, not vitest projects: with arguments they run first, alone. */
const scripts = STAGES.flat().filter((stream) => stream.script !== undefined);

/** The counts of vitest's JSON report, summed over the streams' reports. */
const REPORT_COUNTS = [
  'numTotalTestSuites',
  'numPassedTestSuites',
  'numFailedTestSuites',
  'numPendingTestSuites',
  'numTotalTests',
  'numPassedTests',
  'numFailedTests',
  'numPendingTests',
  'numTodoTests',
] as const;

/** One vitest JSON report made of the streams' reports: their counts summed and their files listed. */
const merge = (files: readonly string[]): Record<string, unknown> => {
  const reports = files.filter((file) => existsSync(file)).map((file) => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>);
  const merged: Record<string, unknown> = {};
  for (const key of REPORT_COUNTS) merged[key] = reports.reduce((sum, report) => sum + (Number(report[key]) || 0), 0);
  merged.startTime = Math.min(...reports.map((report) => Number(report.startTime) || Date.now()));
  merged.success = reports.length === files.length && reports.every((report) => report.success === true);
  merged.testResults = reports.flatMap((report) => (Array.isArray(report.testResults) ? report.testResults : []));
  return merged;
};

/** Whole seconds since `since` (a `Date.now()`). */
const secondsSince = (since: number): string => ((Date.now() - since) / 1000).toFixed(0);

const main = async (): Promise<number> => {
  const extra = process.argv.slice(2);
  if (extra.length > 0 || process.env.TESSERA_TEST_STREAMS === '1') {
    for (const stream of scripts) if ((await runStream(stream, process.env)) !== 0) return 1;
    return run(extra, process.env);
  }
  const started = Date.now();
  const statuses: number[] = [];
  const reports: string[] = [];
  for (const stage of STAGES) {
    const together = stage.length > 1;
    statuses.push(
      ...(await Promise.all(
        stage.map((stream) => {
          const results = stream.script === undefined ? resultsOf(stream) : undefined;
          if (results !== undefined) reports.push(results);
          const env = { ...process.env, TESSERA_TEST_RESULTS: results };
          const began = Date.now();
          return runStream(stream, env, together ? stream.name : undefined).then((status) => {
            console.log(`test: ${stream.name} ${status === 0 ? 'passed' : 'failed'} in ${secondsSince(began)} s`);
            return status;
          });
        }),
      )),
    );
  }
  if (resultsFile !== undefined) writeFileSync(resultsFile, JSON.stringify(merge(reports)));
  const failed = statuses.filter((status) => status !== 0).length;
  console.log(`test: ${STAGES.flat().length} streams in ${secondsSince(started)} s; ${failed === 0 ? 'all passed' : `${failed} failed`}`);
  return failed === 0 ? 0 : 1;
};

process.exitCode = await main();
