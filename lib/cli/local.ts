import type { LocalFanOutProps } from '../infra/fan-out-metadata';
import type { LocalCloud, LocalCloudPorts } from '../local/cloud';
import type { LocalLogEntry } from '../local/log';
import type { CliIo } from './router';
import type { RunTarget } from './run';
import { workerModulePath } from './workers';
import { tracePhase } from '../local/startup-trace';

/** The tenant the local cloud's demo token belongs to. */
export const DEMO_TENANT = 'demo';

export interface LocalCloudSession {
  readonly cloud: LocalCloud;
  readonly token: string;
}

/**
 * What the local cloud prints of its own log: everything with `--verbose`; otherwise only
 * `error` entries, which are faults of the local cloud itself (a lost Lambda invocation, a
 * server that failed a request) and never expected behaviour of a run.
 *
 * @example
 * const log = localCloudLog(io, false);
 */
export const localCloudLog =
  (io: CliIo, verbose: boolean) =>
  (entry: LocalLogEntry): void => {
    if (verbose || entry.level === 'error') io.err(`[${entry.component}] ${entry.message}`);
  };

/**
 * Starts the whole pipeline in this process. The CDK and emulator modules are imported here,
 * on demand, so `tessera run --api …` against a deployed stack never loads them.
 */
export const startLocalSession = async (
  io: CliIo,
  options: { ports?: LocalCloudPorts; verbose?: boolean; quiet?: boolean; workers?: string; fanOut?: Partial<LocalFanOutProps> } = {},
): Promise<LocalCloudSession> => {
  // Resolved before the CDK and the emulators load, so a wrong path fails at once.
  const workers = workerModulePath(options.workers);
  // DynamoDB Local's JVM is the slowest part of a start: it is launched first (its module imports
  // only Node's), so it boots while the rest of the cloud's modules are imported.
  const { launchDynamoDbLocal } = await import('../local/dynamodb-local');
  const dynamodb = launchDynamoDbLocal({ ...(options.ports?.dynamodb === undefined ? {} : { port: options.ports.dynamodb }), recordClassData: true });
  // Awaited by the cloud; until then a failed launch must not surface as an unhandled rejection.
  dynamodb.catch(() => undefined);
  let imported: typeof import('../local/tessera-cloud');
  try {
    imported = await tracePhase('cloud.import-modules', () => import('../local/tessera-cloud'));
  } catch (error) {
    await dynamodb.then(
      (launched) => launched.stop(),
      () => undefined,
    );
    throw error;
  }
  const cloud = await tracePhase('cloud.start', () =>
    imported.startTesseraCloud({
      workers,
      ...(options.fanOut ? { fanOut: options.fanOut } : {}),
      ...(options.ports ? { ports: options.ports } : {}),
      log: localCloudLog(io, options.verbose === true),
      functionLogLevel: options.verbose ? 'INFO' : options.quiet ? 'ERROR' : 'WARN',
      recordClassData: true,
      dynamodb,
    }),
  );
  const token = await cloud.mintToken({ tenant: DEMO_TENANT, subject: 'local-user', expiresIn: '12h' });
  return { cloud, token };
};

/** Stops the cloud on Ctrl-C too, so no emulator outlives the command. */
export const stopOnSignals = (stop: () => Promise<void>): (() => void) => {
  const onSignal = (signal: NodeJS.Signals) => {
    void stop().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
};

/** What `tessera run` uses when no local cloud is running: one of its own, for this run only. */
export const startLocalForRun = async (io: CliIo, options: { workers?: string } = {}): Promise<RunTarget> => {
  io.err('No local cloud is running; starting one in this process (DynamoDB Local, SQS emulator, Step Functions, Lambda, API)…');
  const { cloud, token } = await startLocalSession(io, { quiet: true, ...options });
  const release = stopOnSignals(() => cloud.stop());
  return {
    apiUrl: cloud.apiUrl ?? '',
    token,
    description: 'an in-process local cloud',
    local: true,
    stop: async () => {
      release();
      await cloud.stop();
    },
  };
};
