/**
 * The emulator lane (`npm run test:emulator`): deploys the real CDK app (bin/app.ts) to an AWS
 * emulator and runs the unchanged end-to-end suite against it. See docs/emulator.md.
 *
 * Steps: install (pinned ministack into .venv-emulator/) → synth → start (ministack on a free 127.0.0.1
 * port, through scripts/emulator/launch.py) → bootstrap → deploy (`-c tessera:emulator=true`) →
 * users (one Cognito user per tenant, real ID tokens) → warm-up (one run of each example) → e2e
 * (`vitest run --project e2e`) → scale (one run of 2,000 no-op subtasks) → destroy → stop.
 * Whatever fails, destroy and stop still run, and the failed step is named. Only the process
 * group the lane started is stopped.
 *
 * Options:
 *   --break=worker-esm  deploy a throwaway stack whose tax worker has no event-source mapping
 *                       (scripts/emulator/broken-app.ts): the lane must fail, at the tax tests.
 * Environment:
 *   TESSERA_EMULATOR_URL  an emulator already running (LocalStack: http://localhost:4566); the
 *                         lane then neither installs, starts nor stops one.
 *   TESSERA_EMULATOR_E2E  e2e files (space-separated) to run instead of the whole e2e project, when
 *                         retrying one failure against the deployed stack.
 *   TESSERA_EMULATOR_IAM  `true` turns ministack's IAM enforcement (AUTH=true, over TLS) on; off by
 *                         default: ministack's JWT authorizer then refuses every token
 *                         (docs/emulator.md, "IAM").
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { CONTEXT_KEYS } from '../../lib/infra/app-context';
import { STACK_OUTPUTS } from '../../lib/infra/stack-outputs';
import { E2E_BATCH_SUBTASKS } from '../../test/e2e/batch-size';

const root = resolve(import.meta.dirname, '..', '..');
const ACCOUNT = '000000000000';
const REGION = 'us-east-1';
const TENANTS = ['acme', 'globex'] as const;
/**
 * Batches of a batched round run at once in the lane's deployment (the construct's default is 40).
 * ministack runs every concurrent Lambda invocation in a Node process of its own: at 40 batches of
 * 5, the scale step's round held 200 subtask iterations at once, about 200 Node processes on two
 * cores, and the deadline function's 15-s timeout expired in cold starts (docs/emulator.md, "Scale").
 */
const BATCH_CONCURRENCY = 4;

/** e2e tests the lane leaves out, by (part of) their name, each with its entry in docs/emulator.md. */
const KNOWN_FAILURES: readonly string[] = [];

const args = process.argv.slice(2);
const broken = args.includes('--break=worker-esm');
const unknown = args.filter((a) => a !== '--break=worker-esm');
if (unknown.length > 0) {
  console.error(`emulator lane: unknown option ${unknown.join(' ')} (known: --break=worker-esm)`);
  process.exit(64);
}
const external = process.env.TESSERA_EMULATOR_URL;
const enforceIam = process.env.TESSERA_EMULATOR_IAM === 'true';
const chosenFiles = process.env.TESSERA_EMULATOR_E2E?.split(/\s+/).filter(Boolean) ?? [];
/**
 * With IAM enforced the emulator must speak TLS: the CDK bootstrap bucket and the stack's queues
 * deny requests without `aws:SecureTransport`, as AWS does (docs/emulator.md, "IAM").
 */
const tls = enforceIam;
const stackName = broken ? 'TesseraEmulatorBroken' : 'TesseraEmulator';
const logDir = mkdtempSync(join(tmpdir(), 'tessera-emulator-'));
const started = Date.now();

const say = (line: string) => console.log(`emulator lane: ${line}`);
const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

class StepFailed extends Error {}

/** Runs a command with its output in `<logDir>/<step>.log` (and on the console too when `echo`). */
const command = (step: string, cmd: string, argv: string[], env: NodeJS.ProcessEnv, echo = false, cwd = root): Promise<string> =>
  new Promise((done, fail) => {
    const log = join(logDir, `${step}.log`);
    const fd = openSync(log, 'a');
    const child = spawn(cmd, argv, { cwd, env, stdio: ['ignore', echo ? 'pipe' : fd, echo ? 'pipe' : fd] });
    if (echo) {
      for (const stream of [child.stdout, child.stderr]) {
        stream?.on('data', (chunk: Buffer) => {
          process.stdout.write(chunk);
          writeSync(fd, chunk);
        });
      }
    }
    child.on('error', (error) => {
      closeSync(fd);
      fail(new StepFailed(`${step}: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      closeSync(fd);
      if (code === 0) done(log);
      else fail(new StepFailed(`${step}: ${cmd} exited ${code ?? signal}; log: ${log}\n${tail(log)}`));
    });
  });

const tail = (file: string, lines = 30): string => {
  try {
    return readFileSync(file, 'utf8')
      .trimEnd()
      .split('\n')
      .slice(-lines)
      .map((l) => `  | ${l}`)
      .join('\n');
  } catch {
    return '';
  }
};

const freePort = (): Promise<number> =>
  new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => done(port));
    });
  });

const portOpen = (port: number): Promise<boolean> =>
  new Promise((done) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The emulator the lane started: its process group (it is the group's leader) and port. */
interface Emulator {
  readonly child: ChildProcess;
  readonly port: number;
  readonly log: string;
}

/** The emulator's process, while the lane holds one: an interrupt stops its group before exiting. */
let running: ChildProcess | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    const pid = running?.pid;
    if (pid !== undefined && groupAlive(pid)) process.kill(-pid, 'SIGKILL');
    console.error(`emulator lane: interrupted (${signal}); stopped the emulator, left any stack as it was; logs in ${logDir}`);
    process.exit(130);
  });
}

const groupAlive = (pid: number): boolean => {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
};

const startEmulator = async (): Promise<Emulator> => {
  const port = await freePort();
  const log = join(logDir, 'ministack.log');
  const fd = openSync(log, 'a');
  // detached: the emulator leads a process group of its own, which also holds the Node processes it
  // starts for Lambda functions, so stopping the group stops exactly what the lane started.
  const child = spawn(join(root, '.venv-emulator', 'bin', 'python'), [join(root, 'scripts', 'emulator', 'launch.py')], {
    cwd: logDir,
    detached: true,
    stdio: ['ignore', fd, fd],
    env: {
      ...process.env,
      GATEWAY_PORT: String(port),
      BIND_HOST: '127.0.0.1',
      // The host in the URLs it hands out (queue URLs among them). With TLS it must be a name its
      // self-signed certificate covers; without, clients reach the address it listens on.
      MINISTACK_HOST: tls ? 'localhost' : '127.0.0.1',
      // HTTPS with a self-signed certificate under TMPDIR/ministack-tls/, which ministack's own
      // Lambda processes trust; the lane's processes get it through NODE_EXTRA_CA_CERTS.
      USE_SSL: tls ? '1' : '0',
      // ministack writes its PID file and scratch files under TMPDIR: keep them with the logs.
      TMPDIR: logDir,
      AUTH: enforceIam ? 'true' : 'false',
      LOG_LEVEL: 'INFO',
      // Two listeners the stack does not use; IoT's would bind 0.0.0.0:8883 (all interfaces, a
      // fixed port) and collide with a second lane on the same machine.
      IOT_MTLS_ENABLED: '0',
      SFTP_ENABLED: '0',
    },
  });
  closeSync(fd);
  running = child;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new StepFailed(`start: ministack exited ${child.exitCode}; log: ${log}\n${tail(log)}`);
    if (await portOpen(port)) break;
    if (Date.now() > deadline) throw new StepFailed(`start: ministack did not listen on 127.0.0.1:${port} within 60 s; log: ${log}\n${tail(log)}`);
    await sleep(250);
  }
  return { child, port, log };
};

const stopEmulator = async (emulator: Emulator): Promise<void> => {
  const pid = emulator.child.pid;
  if (pid === undefined) return;
  if (groupAlive(pid)) process.kill(-pid, 'SIGTERM');
  for (let waited = 0; groupAlive(pid) && waited < 15_000; waited += 200) await sleep(200);
  if (groupAlive(pid)) {
    say(`process group ${pid} still alive 15 s after SIGTERM; sending SIGKILL`);
    process.kill(-pid, 'SIGKILL');
    for (let waited = 0; groupAlive(pid) && waited < 5_000; waited += 200) await sleep(200);
  }
  if (groupAlive(pid)) throw new StepFailed(`stop: process group ${pid} is still alive`);
  if (await portOpen(emulator.port)) throw new StepFailed(`stop: port ${emulator.port} still accepts connections`);
};

const Outputs = z.object({
  [STACK_OUTPUTS.apiUrl]: z.url(),
  [STACK_OUTPUTS.userPoolId]: z.string().min(1),
  [STACK_OUTPUTS.userPoolClientId]: z.string().min(1),
  [STACK_OUTPUTS.subtaskQueueUrls]: z.string().min(2),
  [STACK_OUTPUTS.deadLetterQueueUrl]: z.url(),
});

const main = async (): Promise<number> => {
  say(`logs in ${logDir}`);
  let emulator: Emulator | undefined;
  let deployStarted = false;
  let failure: StepFailed | undefined;
  let current = 'install';
  const step = async <T>(name: string, body: () => Promise<T>): Promise<T> => {
    current = name;
    const since = Date.now();
    say(`${name} …`);
    const result = await body();
    say(`${name} done in ${seconds(since)}`);
    return result;
  };

  let url = external ?? '';
  const certificate = join(logDir, 'ministack-tls', 'server.crt');
  const awsEnv = (): NodeJS.ProcessEnv => ({
    ...process.env,
    AWS_ENDPOINT_URL: url,
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_REGION: REGION,
    AWS_DEFAULT_REGION: REGION,
    CDK_DEFAULT_ACCOUNT: ACCOUNT,
    CDK_DEFAULT_REGION: REGION,
    // No profile or config file of the person running the lane may redirect the deployment.
    AWS_PROFILE: undefined,
    AWS_CONFIG_FILE: join(logDir, 'no-aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(logDir, 'no-aws-credentials'),
    ...(tls && !external ? { NODE_EXTRA_CA_CERTS: certificate, AWS_CA_BUNDLE: certificate } : {}),
  });
  const assembly = join(logDir, 'cdk.out');
  const cdkArgs = ['--app', assembly];
  const synthArgs = [
    '--app',
    broken ? 'npx tsx scripts/emulator/broken-app.ts' : 'npx tsx bin/app.ts',
    '--output',
    assembly,
    '-c',
    `${CONTEXT_KEYS.stackName}=${stackName}`,
    '-c',
    `${CONTEXT_KEYS.emulator}=true`,
    '-c',
    `${CONTEXT_KEYS.faultInjection}=true`,
    '-c',
    `${CONTEXT_KEYS.removalPolicy}=destroy`,
    // The suite's large-run tests need small batches (test/e2e/batch-size.ts).
    '-c',
    `${CONTEXT_KEYS.batchSubtasks}=${E2E_BATCH_SUBTASKS}`,
    '-c',
    `${CONTEXT_KEYS.batchConcurrency}=${BATCH_CONCURRENCY}`,
  ];

  try {
    if (!external) await step('install', () => command('install', 'bash', ['scripts/emulator/install.sh'], process.env));
    // Synthesized once: deploy and destroy read this cloud assembly instead of each bundling
    // every function again.
    await step('synth', () => command('synth', 'npx', ['cdk', 'synth', '--quiet', ...synthArgs], awsEnv()));
    if (!external) {
      emulator = await step('start', startEmulator);
      url = tls ? `https://localhost:${emulator.port}` : `http://127.0.0.1:${emulator.port}`;
      say(`ministack pid ${emulator.child.pid} at ${url} (IAM ${enforceIam ? 'enforced' : 'not enforced'}); log: ${emulator.log}`);
    } else {
      say(`using the emulator at ${url}; not starting one`);
    }
    // From the log directory, where no cdk.json names an app: bootstrapping an explicit
    // environment then needs no synth of the app.
    const cdk = join(root, 'node_modules', '.bin', 'cdk');
    await step('bootstrap', () => command('bootstrap', cdk, ['bootstrap', `aws://${ACCOUNT}/${REGION}`], awsEnv(), false, logDir));
    const outputsFile = join(logDir, 'outputs.json');
    deployStarted = true;
    await step('deploy', () =>
      command('deploy', 'npx', ['cdk', 'deploy', stackName, '--require-approval', 'never', '--outputs-file', outputsFile, ...cdkArgs], awsEnv()),
    );
    const outputs = Outputs.parse(z.record(z.string(), z.unknown()).parse(JSON.parse(readFileSync(outputsFile, 'utf8')))[stackName]);
    // The ApiUrl output names AWS's host (`<apiId>.execute-api.<region>.amazonaws.com`); emulators
    // serve the same API under their own `_aws/execute-api/<apiId>/<stage>/` path.
    const apiId = new URL(outputs[STACK_OUTPUTS.apiUrl]).hostname.split('.')[0];
    const apiUrl = `${url}/_aws/execute-api/${apiId}/$default/`;
    say(`API ${apiUrl}`);

    const tokens = await step('users', async () => {
      const log = join(logDir, 'users.log');
      const out = join(logDir, 'tokens.json');
      const python = external ? 'python3' : join(root, '.venv-emulator', 'bin', 'python');
      await command(
        'users',
        'bash',
        [
          '-c',
          `"$0" "$@" > "${out}" 2>> "${log}"`,
          python,
          'scripts/emulator/users.py',
          url,
          REGION,
          outputs[STACK_OUTPUTS.userPoolId],
          outputs[STACK_OUTPUTS.userPoolClientId],
          ...TENANTS,
        ],
        awsEnv(),
      );
      const read = readFileSync(out, 'utf8');
      rmSync(out); // ID tokens are credentials: they live in this process only
      return z.object({ acme: z.string().min(1), globex: z.string().min(1) }).parse(JSON.parse(read));
    });

    await step('warm-up', () =>
      command('warm-up', 'npx', ['tsx', 'scripts/emulator/warm-up.ts'], { ...awsEnv(), TESSERA_API_URL: apiUrl, TESSERA_TOKEN: tokens.acme }, true),
    );

    if (KNOWN_FAILURES.length > 0)
      say(`e2e: leaving out the known failures ${KNOWN_FAILURES.map((name) => JSON.stringify(name)).join(', ')} (docs/emulator.md, "Known failures")`);
    // Known failures are left out by name (a negative lookahead over the full test name).
    const leaveOut = KNOWN_FAILURES.map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
    await step('e2e', () =>
      command(
        'e2e',
        'npx',
        ['vitest', 'run', '--project', 'e2e', ...(KNOWN_FAILURES.length > 0 ? ['--testNamePattern', `^(?!.*${leaveOut}).*$`] : []), ...chosenFiles],
        {
          ...awsEnv(),
          TESSERA_API_URL: apiUrl,
          TESSERA_TOKEN: tokens.acme,
          TESSERA_OTHER_TENANT_TOKEN: tokens.globex,
          TESSERA_SUBTASK_QUEUE_URLS: outputs[STACK_OUTPUTS.subtaskQueueUrls],
          TESSERA_DEAD_LETTER_QUEUE_URL: outputs[STACK_OUTPUTS.deadLetterQueueUrl],
        },
        true,
      ),
    );

    // One large run: a batched round of hundreds of child executions (docs/emulator.md, "Scale").
    // Left out when only some e2e files were asked for: that is a retry of one failure.
    if (chosenFiles.length > 0) say('scale: left out (TESSERA_EMULATOR_E2E names the e2e files to run)');
    else
      await step('scale', () =>
        command('scale', 'npx', ['tsx', 'scripts/emulator/scale-run.ts'], { ...awsEnv(), TESSERA_API_URL: apiUrl, TESSERA_TOKEN: tokens.acme }, true),
      );
  } catch (error) {
    failure = error instanceof StepFailed ? error : new StepFailed(`${current}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  }

  // What the deployed functions logged, one file per log group, whether the steps passed or not:
  // the api function's "unhandled error" line is how a 500 from the stack is read.
  if (deployStarted) {
    try {
      const python = external ? 'python3' : join(root, '.venv-emulator', 'bin', 'python');
      await step('logs', () => command('logs', python, ['scripts/emulator/function-logs.py', url, REGION, join(logDir, 'functions')], awsEnv()));
    } catch (error) {
      say(`logs: not read (${error instanceof Error ? error.message : String(error)})`);
    }
  }

  // Teardown runs whatever happened above, and its own failures are reported too.
  if (deployStarted) {
    try {
      await step('destroy', () => command('destroy', 'npx', ['cdk', 'destroy', stackName, '--force', ...cdkArgs], awsEnv()));
    } catch (error) {
      failure ??= error instanceof StepFailed ? error : new StepFailed(`destroy: ${String(error)}`);
      say(`destroy failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (emulator) {
    try {
      await step('stop', () => stopEmulator(emulator!));
    } catch (error) {
      failure ??= error instanceof StepFailed ? error : new StepFailed(`stop: ${String(error)}`);
      say(`stop failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  if (failure) {
    console.error(`emulator lane: FAILED at step ${failure.message}`);
    say(`logs in ${logDir}; took ${seconds(started)}`);
    return 1;
  }
  // A pass keeps the logs only: the cloud assembly and the emulator's unpacked functions are
  // about 100 MB a run. A failure keeps everything for whoever reads it.
  for (const entry of readdirSync(logDir)) {
    if (entry === 'cdk.out' || entry === 'ministack-tls' || entry.startsWith('ministack-lambda-'))
      rmSync(join(logDir, entry), { recursive: true, force: true });
  }
  say(`passed in ${seconds(started)}; logs in ${logDir}`);
  return 0;
};

process.exitCode = await main();
