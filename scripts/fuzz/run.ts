/**
 * The API fuzz suite (`npm run test:fuzz`): starts the local cloud, runs Schemathesis against
 * schemas/openapi.json with a valid token, stops the cloud (also on failure or Ctrl-C), and prints
 * one summary line. It fails on any 5xx answer, any answer whose status code, content type or body
 * the OpenAPI document does not allow, and any Schemathesis error.
 *
 * Phases: `examples` sends every request of examples/ (the success path), `fuzzing` generated
 * valid and invalid requests, `stateful` follows the document's links from a created run to
 * reading and cancelling it. `coverage` (the boundary values of every schema) is opt-in: on the
 * run request's large schema it sends far more requests than the time this suite is given.
 *
 * Settings (environment): FUZZ_MAX_EXAMPLES (per operation and phase, default 40), FUZZ_SEED
 * (default a fixed seed, so a run is reproducible; `random` for a fresh one), FUZZ_PHASES
 * (default `examples,fuzzing,stateful`), FUZZ_WORKERS (default 1: Hypothesis is not thread-safe
 * everywhere, and the local cloud shares the machine). The tools come from .venv/
 * (scripts/fuzz/install.sh, run by `npm run test:fuzz`).
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { unbanner } from './banner';
import type { LocalCloud } from '../../lib/local/cloud';

/** The repository, from this script's own location. */
const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SCHEMATHESIS = join(REPO_ROOT, '.venv', 'bin', 'schemathesis');
const OPENAPI = join(REPO_ROOT, 'schemas', 'openapi.json');
const CONFIG = join(REPO_ROOT, 'scripts', 'fuzz', 'schemathesis.toml');

/** The checks that make the suite fail, with what each one means. */
const CHECKS = [
  'not_a_server_error', // no 5xx
  'status_code_conformance', // every status the document lists
  'content_type_conformance', // the content type the document gives for that status
  'response_schema_conformance', // the body the document gives for that status
] as const;

const Settings = z.object({
  FUZZ_MAX_EXAMPLES: z.coerce.number().int().min(1).default(40),
  FUZZ_SEED: z.union([z.literal('random'), z.coerce.number().int().min(0)]).default(20261130),
  FUZZ_PHASES: z
    .string()
    .regex(/^(examples|coverage|fuzzing|stateful)(,(examples|coverage|fuzzing|stateful))*$/)
    .default('examples,fuzzing,stateful'),
  FUZZ_WORKERS: z.coerce.number().int().min(1).max(16).default(1),
});

/** The HAR file Schemathesis writes: one entry per request it sent. */
const Har = z.object({ log: z.object({ entries: z.array(z.object({ response: z.object({ status: z.number() }) })) }) });

const fail = (message: string): never => {
  console.error(`fuzz: ${message}`);
  process.exit(2);
};

/** Copies `from` to `to` line by line through {@link unbanner}. */
const pipeLines = (from: NodeJS.ReadableStream, to: NodeJS.WritableStream): Promise<void> =>
  new Promise((resolve, reject) => {
    const lines = createInterface({ input: from, crlfDelay: Infinity });
    lines.on('line', (line) => to.write(`${unbanner(line)}\n`));
    lines.once('close', resolve);
    lines.once('error', reject);
  });

/** Runs Schemathesis in `cwd`, where it keeps its own cache, so that nothing lands in the repository. */
const runSchemathesis = (args: readonly string[], env: NodeJS.ProcessEnv, cwd: string): { done: Promise<number>; stop: () => void } => {
  const child = spawn(SCHEMATHESIS, args, { stdio: ['ignore', 'pipe', 'pipe'], env, cwd });
  const piped = Promise.all([pipeLines(child.stdout, process.stdout), pipeLines(child.stderr, process.stderr)]);
  const done = new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  }).then(async (code) => {
    await piped;
    return code;
  });
  return { done, stop: () => child.kill('SIGTERM') };
};

const main = async (): Promise<number> => {
  if (!existsSync(SCHEMATHESIS)) fail('Schemathesis is not installed in .venv/; run scripts/fuzz/install.sh (npm run test:fuzz does).');
  const settings = Settings.parse(process.env);
  const reports = mkdtempSync(join(tmpdir(), 'tessera-fuzz-'));
  const started = Date.now();
  let cloud: LocalCloud | undefined;
  let stopChild: (() => void) | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    console.error(`fuzz: ${signal}, stopping`);
    stopChild?.();
    void (cloud?.stop() ?? Promise.resolve()).finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    console.log('fuzz: starting the local cloud');
    const { startTesseraCloud } = await import('../../lib/local/tessera-cloud');
    // The cloud's own warnings name the cause of a 5xx the function did not answer itself
    // (a function error or timeout): printed, so a failure can be diagnosed from this output.
    const { exampleWorkerModule } = await import('../../examples/app/cdk');
    cloud = await startTesseraCloud({
      workers: exampleWorkerModule({ faultInjection: false }),
      functionLogLevel: 'ERROR',
      log: (entry) => {
        if (entry.level === 'warn' || entry.level === 'error') console.error(`fuzz: [cloud ${entry.component}] ${entry.message}`);
      },
    });
    if (!cloud.apiUrl) return fail('the local cloud serves no HTTP API');
    const tenant = `fuzz-${randomUUID().slice(0, 8)}`;
    const token = await cloud.mintToken({ tenant, subject: 'fuzz', expiresIn: '2h' });
    const seed = settings.FUZZ_SEED === 'random' ? [] : ['--seed', String(settings.FUZZ_SEED)];
    const args = [
      '--config-file',
      CONFIG,
      'run',
      OPENAPI,
      '--url',
      cloud.apiUrl,
      '--checks',
      CHECKS.join(','),
      '--phases',
      settings.FUZZ_PHASES,
      '--max-examples',
      String(settings.FUZZ_MAX_EXAMPLES),
      '--workers',
      String(settings.FUZZ_WORKERS),
      '--request-timeout',
      '30',
      '--suppress-health-check',
      'too_slow,filter_too_much',
      '--report',
      'har,junit',
      '--report-har-path',
      join(reports, 'requests.har'),
      '--report-junit-path',
      join(reports, 'junit.xml'),
      ...seed,
    ];
    console.log(
      `fuzz: schemathesis against ${cloud.apiUrl} as tenant ${tenant}: ${settings.FUZZ_PHASES}, ${settings.FUZZ_MAX_EXAMPLES} examples per operation and phase, seed ${settings.FUZZ_SEED}`,
    );
    const run = runSchemathesis(args, { ...process.env, FUZZ_TOKEN: token, NO_COLOR: process.env.NO_COLOR ?? '1' }, reports);
    stopChild = run.stop;
    const code = await run.done;
    const har = Har.parse(JSON.parse(readFileSync(join(reports, 'requests.har'), 'utf8')));
    const statuses = har.log.entries.map((entry) => entry.response.status);
    const serverErrors = statuses.filter((status) => status >= 500).length;
    const junit = readFileSync(join(reports, 'junit.xml'), 'utf8');
    const failures = [...junit.matchAll(/<failure\b/g)].length;
    const errors = [...junit.matchAll(/<error\b/g)].length;
    const seconds = Math.round((Date.now() - started) / 1000);
    const ok = code === 0 && serverErrors === 0 && failures === 0 && errors === 0;
    console.log(
      `fuzz: ${ok ? 'PASS' : 'FAIL'}: ${statuses.length} requests, ${serverErrors} 5xx, ${failures} failed checks, ${errors} errors ` +
        `(schemathesis exit ${code}), ${seconds} s`,
    );
    return ok ? 0 : 1;
  } finally {
    await cloud?.stop();
    rmSync(reports, { recursive: true, force: true });
  }
};

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error('fuzz: the suite could not run:', error);
    process.exit(2);
  },
);
