import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type { LocalFanOutProps } from '../infra/fan-out-metadata';
import { CORE_PACKAGE, PACKAGE_ROOT } from '../infra/handler-metadata';
import type { WorkerRegistry } from '../workers/registry';
import { loadWorkerRegistry, registryExportOf, resolveWorkerModule } from '../workers/worker-module';
import { startLocalCloud, startLocalEmulators, type LocalCloud, type LocalCloudPorts } from './cloud';
import type { LaunchingDynamoDbLocal } from './dynamodb-local';
import { LOCAL_AUTH } from './local-auth';
import { localCacheDir } from './local-cache';
import type { LocalLog } from './log';
import { viewerPage } from './viewer-site';
import { recordPhase, tracePhase } from './startup-trace';
import { cachedTemplate, cdkEnvironment, packageVersions, SYNTH_PACKAGES, templateCacheKey } from './template-cache';

export { LOCAL_AUTH } from './local-auth';

const REGION = 'us-east-1';

export interface TesseraCloudOptions {
  /** The worker module to run (absolute, or relative to the current directory): `examples/app/workers.ts`. */
  readonly workers: string;
  readonly ports?: LocalCloudPorts;
  readonly log?: LocalLog;
  /**
   * Record DynamoDB Local's class-data archive when the cache has none (docs/local-cloud.md): the
   * first stop then takes seconds more. The CLI does; tests keep their stops short. @default false
   */
  readonly recordClassData?: boolean;
  /** Level of the functions' own structured logs. @default 'WARN' */
  readonly functionLogLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  /**
   * DynamoDB Local, launched by the caller before it imported this module (see
   * `startLocalEmulators`), with `ports.dynamodb` and `recordClassData` already applied; the
   * cloud owns it from here. @default - launched here
   */
  readonly dynamodb?: Promise<LaunchingDynamoDbLocal>;
  /**
   * The fan-out's `batchSubtasks`, as a deployment sets it: a test cloud with small batches runs
   * a round of a few dozen subtasks across several child executions. @default - the construct's default
   */
  readonly batchSubtasks?: number;
  /**
   * The fan-out's props, as the project's CDK app sets them (`tessera serve` reads them from the
   * app's cloud assembly: lib/local/app-fan-out.ts); `batchSubtasks` above wins over theirs.
   * @default - the construct's defaults
   */
  readonly fanOut?: Partial<LocalFanOutProps>;
}

/**
 * The worker module's registry, and the template synthesized for it: from the cache
 * (lib/local/template-cache.ts) when nothing synthesis reads has changed, else synthesized now
 * (the only time aws-cdk-lib is imported) and cached.
 */
const prepare = async (workers: string, fanOut: Partial<LocalFanOutProps>): Promise<{ registry: WorkerRegistry; template: unknown }> => {
  const registry = await tracePhase('workers.load-registry', () => loadWorkerRegistry(workers));
  const path = resolveWorkerModule(workers);
  // Already imported by loadWorkerRegistry: this only finds which export holds the registry.
  const exportName = registryExportOf(await import(pathToFileURL(path).href), workers);
  const key = await tracePhase('template.cache-key', () =>
    templateCacheKey({
      packageRoot: PACKAGE_ROOT,
      workers: { path, exportName, kinds: registry.kinds() },
      region: REGION,
      ...(Object.keys(fanOut).length === 0 ? {} : { fanOut }),
      packageVersions: packageVersions(PACKAGE_ROOT, [...SYNTH_PACKAGES, CORE_PACKAGE]),
      cdkEnvironment: cdkEnvironment(process.env),
    }),
  );
  const started = performance.now();
  const { template, source } = await cachedTemplate({
    dir: localCacheDir(),
    key,
    synthesize: async () => {
      const { synthesizeLocalTemplate } = await tracePhase('cdk.import', () => import('./local-template'));
      return tracePhase('cdk.synth', () => synthesizeLocalTemplate(path, REGION, fanOut));
    },
  });
  recordPhase(source === 'cache' ? 'template.from-cache' : 'template.synthesized-and-cached', started);
  return { registry, template };
};

/**
 * The whole tessera pipeline on this machine: DynamoDB Local, the SQS emulator, the synthesized
 * state machine, the Lambda handlers, event-source mappings and the HTTP API with JWT auth.
 * DynamoDB Local's JVM, the slowest part, starts first; the worker module and the template are
 * prepared while it boots.
 *
 * @example
 * const cloud = await startTesseraCloud({ workers: 'examples/app/workers.ts' });
 * const token = await cloud.mintToken({ tenant: 'demo', subject: 'me' });
 * // POST `${cloud.apiUrl}/runs` with `authorization: Bearer ${token}`
 * await cloud.stop();
 */
export const startTesseraCloud = async (options: TesseraCloudOptions): Promise<LocalCloud> => {
  // Powertools reads these from the process, not from a function's environment: no EMF lines
  // or X-Ray segments locally unless the caller asked for them.
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  process.env.POWERTOOLS_TRACE_ENABLED ??= 'false';
  const emulators = startLocalEmulators({
    region: REGION,
    ...(options.ports ? { ports: options.ports } : {}),
    recordClassData: options.recordClassData === true,
    ...(options.dynamodb ? { dynamodb: options.dynamodb } : {}),
  });
  // Awaited below; until then a failed start must not surface as an unhandled rejection.
  emulators.catch(() => undefined);
  try {
    const fanOut = { ...options.fanOut, ...(options.batchSubtasks === undefined ? {} : { batchSubtasks: options.batchSubtasks }) };
    const { registry, template } = await prepare(options.workers, fanOut);
    return await startLocalCloud({
      template,
      repoRoot: PACKAGE_ROOT,
      registry,
      region: REGION,
      emulators: await emulators,
      ...(options.ports ? { ports: options.ports } : {}),
      ...(options.log ? { log: options.log } : {}),
      functionEnvironment: { POWERTOOLS_LOG_LEVEL: options.functionLogLevel ?? 'WARN' },
      jwt: { issuer: LOCAL_AUTH.issuer, audience: [LOCAL_AUTH.audience], tenantClaim: LOCAL_AUTH.tenantClaim },
      // The viewer page at `/`: local only, never part of the CDK app.
      pages: viewerPage,
      cacheDir: localCacheDir(),
    });
  } catch (error) {
    // startLocalCloud stops emulators it was handed; this covers a failure before that (stop is idempotent).
    await emulators.then(
      (started) => started.stop(),
      () => undefined,
    );
    throw error;
  }
};
