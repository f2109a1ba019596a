import { ENV } from '../runtime/environment';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { validatedDefinitionsIn } from './definition-cache';
import { launchDynamoDbLocal, type LaunchingDynamoDbLocal } from './dynamodb-local';
import { eventRulesFromTemplate, startEventBus, type EventBus } from './event-rules';
import { startEventSourceMappings, eventSourceMappingsFromTemplate, type EventSourceMappings } from './event-source-mapping';
import { startHttpApi, type LocalHttpApi, type StaticPages } from './http-api';
import { httpApiFromTemplate } from './http-routes';
import { createJwtAuthority, type JwtAuthority, type MintTokenOptions } from './jwt-authority';
import { createLambdaInvoker, LOCAL_CREDENTIALS } from './lambda-client';
import { startLambdaEndpoint, type InvocationStats, type LambdaEndpoint } from './lambda-endpoint';
import { loadFunctions } from './lambda-runtime';
import { silentLog, type LocalLog } from './log';
import { resolveLocalhostSubdomains } from './loopback-dns';
import { freePort } from './ports';
import { provisionQueues, provisionTables, type ProvisionedQueue, type ProvisionedTable } from './provision';
import { createExecutionService, executionStatusChangeEvent, type ExecutionRetention, type ExecutionService } from './sfn-executions';
import { startSqsLocal } from './sqs-local';
import { recordPhase, tracePhase } from './startup-trace';
import { stateMachinesFromTemplate, type LocalStateMachine } from './state-machines';
import { startStepFunctionsEndpoint, type StepFunctionsEndpoint } from './stepfunctions-endpoint';
import { createResolver, LOCAL_ACCOUNT_ID, parseTemplate, resolveOutputs } from './template';
import type { WorkerRegistry } from '../workers/registry';

/**
 * The local cloud: DynamoDB Local and fauxqs, the template's tables and queues, a Lambda endpoint
 * running the real handler modules, the synthesized state machines, the SQS event-source
 * mappings and the HTTP API, wired to each other exactly through the template.
 */

/** Fixed ports for the local cloud's servers; any left out is picked free. */
export interface LocalCloudPorts {
  readonly api?: number;
  readonly lambda?: number;
  readonly stepFunctions?: number;
  readonly dynamodb?: number;
  readonly sqs?: number;
}

/** What to run and where. */
export interface LocalCloudOptions {
  /** The synthesized CloudFormation template (JSON). */
  readonly template: unknown;
  /** Root of the handler modules: the `tessera:handler` metadata paths are relative to it. */
  readonly repoRoot: string;
  /** The worker registry every handler module's `depsFromEnv(env, registry)` receives. */
  readonly registry?: WorkerRegistry;
  /** @default 'us-east-1' */
  readonly region?: string;
  /** Fixed ports; free ones are picked otherwise. */
  readonly ports?: LocalCloudPorts;
  /**
   * Emulators already running: plain endpoints (their owner stops them), or what
   * {@link startLocalEmulators} returned, which the cloud then owns and stops with itself.
   * Otherwise the cloud starts its own.
   */
  readonly emulators?: { readonly dynamodbEndpoint: string; readonly sqsEndpoint: string } | LocalEmulators;
  /** Prefix of derived table and queue names, for clouds sharing emulators. @default '' */
  readonly namePrefix?: string;
  /** Values for template parameters without a usable default. */
  readonly parameters?: Readonly<Record<string, string>>;
  /** The local JWT issuer. The issuer defaults to the API's URL; the audience to `tessera-local`. */
  readonly jwt?: { readonly issuer?: string; readonly audience?: readonly string[]; readonly tenantClaim?: string };
  readonly log?: LocalLog;
  /**
   * Set in every function's environment over the template's, as `sam local --env-vars` does:
   * for local-only choices such as `POWERTOOLS_LOG_LEVEL`. The SDK endpoints always win.
   */
  readonly functionEnvironment?: Readonly<Record<string, string>>;
  /** Public static pages the HTTP API answers before its routes (the local viewer). */
  readonly pages?: StaticPages;
  /**
   * The local cache (lib/local/local-cache.ts): state machine definitions that passed validation
   * there are not validated again (lib/local/definition-cache.ts). Without it, every start validates.
   */
  readonly cacheDir?: string;
  /**
   * The account's quota of open Step Functions executions: a start past it is refused with
   * `ExecutionLimitExceeded`, as on AWS. @default - unlimited
   */
  readonly maxOpenExecutions?: number;
  /** How much of its finished executions the local Step Functions keeps. @default DEFAULT_EXECUTION_RETENTION */
  readonly executionRetention?: ExecutionRetention;
}

/** The URLs of the local services, as `AWS_ENDPOINT_URL_*` and the CLI need them. */
export interface LocalCloudEndpoints {
  readonly dynamodb: string;
  /** The endpoint SDK clients use; queue URLs share its origin. */
  readonly sqs: string;
  readonly lambda: string;
  readonly stepFunctions: string;
  readonly api: string | undefined;
}

/** A running local cloud. */
export interface LocalCloud {
  /** Base URL of the local HTTP API (`undefined` when the template has none). */
  readonly apiUrl: string | undefined;
  readonly endpoints: LocalCloudEndpoints;
  readonly region: string;
  /** The AWS SDK environment the cloud set on `process.env` (restored by `stop()`). */
  readonly environment: Readonly<Record<string, string>>;
  /** The template's Outputs, resolved to local values (as a deployed stack's outputs). */
  readonly outputs: Readonly<Record<string, string>>;
  readonly resources: {
    readonly tables: readonly ProvisionedTable[];
    readonly queues: readonly ProvisionedQueue[];
    readonly functions: readonly { logicalId: string; name: string; arn: string }[];
    readonly stateMachines: readonly { logicalId: string; name: string; arn: string }[];
  };
  /** A token the local HTTP API accepts. */
  mintToken(options: MintTokenOptions): Promise<string>;
  readonly authority: JwtAuthority;
  /** The local Step Functions service: executions with their event logs, live events, callbacks. */
  readonly executions: ExecutionService;
  /** Lambda invocations so far, by function name. */
  lambdaStats(): Readonly<Record<string, InvocationStats>>;
  /** Child processes the cloud started and `stop()` ends (empty when it was given running emulators). */
  readonly processes: readonly number[];
  /** Stops everything this cloud started, emulators included, and restores the environment. Safe to call twice. */
  stop(): Promise<void>;
}

type Cleanup = () => Promise<void> | void;

/** fauxqs's queue URL scheme; provisioning checks every created queue against it. */
const sqsHost = (region: string, port: number): string => `http://sqs.${region}.localhost:${port}`;

const portOf = (endpoint: string): number => Number(new URL(endpoint).port);

/** DynamoDB Local and fauxqs, started by {@link startLocalEmulators}. */
export interface LocalEmulators {
  readonly dynamodbEndpoint: string;
  readonly sqsEndpoint: string;
  /**
   * Resolves once DynamoDB Local accepts connections (its endpoint is known before: the port is
   * chosen first); rejects when it does not start.
   */
  readonly dynamodbReady: Promise<void>;
  /** Child processes started (DynamoDB Local's JVM; fauxqs runs in-process). */
  readonly pids: readonly number[];
  /** Stops both. Safe to call twice. */
  stop(): Promise<void>;
}

const isOwned = (emulators: NonNullable<LocalCloudOptions['emulators']>): emulators is LocalEmulators => 'stop' in emulators;

/**
 * Launches DynamoDB Local and starts fauxqs on 127.0.0.1, resolving once fauxqs listens and the
 * JVM is launched: DynamoDB Local's endpoint is known then, and `dynamodbReady` says when it
 * answers. Separate from {@link startLocalCloud} so a caller can start the JVM first and prepare
 * the template while it boots; hand the result to `startLocalCloud({ emulators })`, which builds
 * everything that does not need DynamoDB while the JVM boots, and then stops them with the cloud.
 *
 * @example
 * const emulators = startLocalEmulators();          // the JVM boots meanwhile
 * const template = await loadTemplate();
 * const cloud = await startLocalCloud({ template, repoRoot, emulators: await emulators });
 */
export const startLocalEmulators = async (
  options: {
    region?: string;
    ports?: Pick<LocalCloudPorts, 'dynamodb' | 'sqs'>;
    recordClassData?: boolean;
    /**
     * A DynamoDB Local the caller launched already (`launchDynamoDbLocal`), so its JVM boots while
     * the caller still imports the rest of the cloud; `ports.dynamodb` and `recordClassData` are
     * then the caller's to pass to that launch. The emulators own it from here: a failed start
     * stops it, as `stop()` does.
     */
    dynamodb?: Promise<LaunchingDynamoDbLocal>;
  } = {},
): Promise<LocalEmulators> => {
  const region = options.region ?? 'us-east-1';
  const [dynamodb, sqs] = await Promise.allSettled([
    options.dynamodb ??
      launchDynamoDbLocal({
        ...(options.ports?.dynamodb === undefined ? {} : { port: options.ports.dynamodb }),
        recordClassData: options.recordClassData === true,
      }),
    tracePhase('sqs.start', () => startSqsLocal({ region, ...(options.ports?.sqs === undefined ? {} : { port: options.ports.sqs }) })),
  ]);
  if (dynamodb.status === 'rejected' || sqs.status === 'rejected') {
    await Promise.allSettled([dynamodb.status === 'fulfilled' && dynamodb.value.stop(), sqs.status === 'fulfilled' && sqs.value.stop()]);
    throw dynamodb.status === 'rejected' ? dynamodb.reason : (sqs as PromiseRejectedResult).reason;
  }
  const dynamodbReady = dynamodb.value.ready.then(() => recordPhase('dynamodb.jvm-to-port', dynamodb.value.launchedAt));
  dynamodbReady.catch(() => undefined);
  let stopping: Promise<void> | undefined;
  return {
    dynamodbEndpoint: dynamodb.value.endpoint,
    sqsEndpoint: sqs.value.endpoint,
    dynamodbReady,
    pids: [dynamodb.value.pid],
    stop: () => (stopping ??= Promise.all([sqs.value.stop(), dynamodb.value.stop()]).then(() => undefined)),
  };
};

interface Emulators {
  readonly dynamodb: string;
  readonly dynamodbReady: Promise<void>;
  readonly sqsPort: number;
  /** Child processes this cloud started (DynamoDB Local's JVM; fauxqs runs in-process). */
  readonly pids: readonly number[];
}

const startEmulators = async (options: LocalCloudOptions, region: string, cleanups: Cleanup[]): Promise<Emulators> => {
  const given = options.emulators;
  if (given && !isOwned(given)) return { dynamodb: given.dynamodbEndpoint, dynamodbReady: Promise.resolve(), sqsPort: portOf(given.sqsEndpoint), pids: [] };
  // Handed-over emulators are stopped by startLocalCloud's cleanups.
  if (given) return { dynamodb: given.dynamodbEndpoint, dynamodbReady: given.dynamodbReady, sqsPort: portOf(given.sqsEndpoint), pids: given.pids };
  const emulators = await startLocalEmulators({ region, ...(options.ports ? { ports: options.ports } : {}) });
  cleanups.push(() => emulators.stop());
  return { dynamodb: emulators.dynamodbEndpoint, dynamodbReady: emulators.dynamodbReady, sqsPort: portOf(emulators.sqsEndpoint), pids: emulators.pids };
};

/** Sets the SDK environment and returns how to put the previous values back. */
const applyEnvironment = (values: Readonly<Record<string, string>>): Cleanup => {
  // With this set, the SDK ignores AWS_ENDPOINT_URL_* and would call real AWS.
  const keys = [...Object.keys(values), 'AWS_IGNORE_CONFIGURED_ENDPOINT_URLS'];
  const previous = new Map(keys.map((key) => [key, process.env[key]]));
  delete process.env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS;
  Object.assign(process.env, values);
  return () => {
    for (const [key, value] of previous) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  };
};

interface Wiring {
  readonly region: string;
  readonly ports: { lambda: number; stepFunctions: number };
  readonly dynamodb: string;
  readonly sqs: string;
}

const sdkEnvironment = (wiring: Wiring): Record<string, string> => ({
  AWS_REGION: wiring.region,
  AWS_DEFAULT_REGION: wiring.region,
  AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
  AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
  AWS_ENDPOINT_URL_DYNAMODB: wiring.dynamodb,
  AWS_ENDPOINT_URL_SQS: wiring.sqs,
  AWS_ENDPOINT_URL_SFN: `http://127.0.0.1:${wiring.ports.stepFunctions}`,
  AWS_ENDPOINT_URL_LAMBDA: `http://127.0.0.1:${wiring.ports.lambda}`,
  // There is no STS and no IAM locally: the tenant-scoped functions use these local credentials
  // against DynamoDB Local instead of assuming their ledger-access role per tenant. Deliberately
  // here and nowhere else; `ledgerAccessFromEnv` refuses `local` without a local DynamoDB endpoint.
  [ENV.ledgerAccess]: 'local',
});

const pickPorts = async (ports: LocalCloudPorts | undefined) => ({
  lambda: ports?.lambda ?? (await freePort()),
  stepFunctions: ports?.stepFunctions ?? (await freePort()),
  api: ports?.api ?? (await freePort()),
});

const summary = (items: readonly { logicalId: string; name: string; arn: string }[]) => items.map(({ logicalId, name, arn }) => ({ logicalId, name, arn }));

/**
 * Starts the local cloud for a synthesized template. Nothing is printed unless `log` is given.
 *
 * @example
 * const cloud = await startLocalCloud({ template, repoRoot: process.cwd() });
 * const token = await cloud.mintToken({ tenant: 'acme', subject: 'alice' });
 * await fetch(`${cloud.apiUrl}/runs`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body });
 * await cloud.stop();
 */
export const startLocalCloud = async (options: LocalCloudOptions): Promise<LocalCloud> => {
  const log = options.log ?? silentLog;
  const region = options.region ?? 'us-east-1';
  const cleanups: Cleanup[] = [];
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      for (const cleanup of cleanups.reverse()) {
        try {
          await cleanup();
        } catch (error) {
          log({ level: 'warn', component: 'cloud', message: `stopping: ${(error as Error).message}` });
        }
      }
    })());
  // Handed-over emulators are the cloud's from here on, whatever fails next.
  const handed = options.emulators;
  if (handed && isOwned(handed)) cleanups.push(() => handed.stop());
  try {
    return await assemble(options, region, log, cleanups, stop);
  } catch (error) {
    await stop();
    throw error;
  }
};

const assemble = async (options: LocalCloudOptions, region: string, log: LocalLog, cleanups: Cleanup[], stop: () => Promise<void>): Promise<LocalCloud> => {
  const template = parseTemplate(options.template);
  const emulators = await startEmulators(options, region, cleanups);
  cleanups.push(resolveLocalhostSubdomains());
  const ports = await pickPorts(options.ports);
  const sqs = sqsHost(region, emulators.sqsPort);
  const apiUrl = `http://127.0.0.1:${ports.api}`;
  const resolver = createResolver(template, {
    region,
    queueUrl: (name) => `${sqs}/${LOCAL_ACCOUNT_ID}/${name}`,
    httpApiUrl: apiUrl,
    ...(options.namePrefix === undefined ? {} : { namePrefix: options.namePrefix }),
    ...(options.parameters === undefined ? {} : { parameters: options.parameters }),
  });
  const clientConfig = { region, credentials: LOCAL_CREDENTIALS };
  // The event-source mappings' pollers hold one 20-s long poll each (five per mapping), all on this
  // client. The SDK's default agent allows 50 sockets, so from eleven mappings on, some pollers
  // waited up to 20 s for a socket and a message sat unreceived that long (a hedge copy lost its
  // race). On loopback to the emulator the agent has no socket limit.
  const sqsClient = new SQSClient({ ...clientConfig, endpoint: sqs, requestHandler: { httpAgent: new Agent({ keepAlive: true }) } });
  // Everything up to the HTTP API is built while DynamoDB Local's JVM boots: the handlers only
  // need its endpoint, which is known. The tables are created once it answers, before the HTTP
  // API opens, so no request can reach a table that does not exist yet.
  const tables = emulators.dynamodbReady.then(() =>
    tracePhase('dynamodb.tables', () => provisionTables(resolver, new DynamoDBClient({ ...clientConfig, endpoint: emulators.dynamodb }))),
  );
  tables.catch(() => undefined);
  const queues = await tracePhase('sqs.queues', () => provisionQueues(resolver, sqsClient));

  // The SDK reads these when a client is created, so they are set before any handler is built.
  const environment = sdkEnvironment({ region, ports, dynamodb: emulators.dynamodb, sqs });
  cleanups.push(applyEnvironment(environment));
  const functions = await tracePhase('lambda.load-handlers', () =>
    loadFunctions({
      resolver,
      repoRoot: options.repoRoot,
      runtimeEnvironment: { ...options.functionEnvironment, ...environment },
      ...(options.registry ? { registry: options.registry } : {}),
    }),
  );
  const lambdaEndpoint: LambdaEndpoint = await startLambdaEndpoint({ functions, port: ports.lambda, log });
  cleanups.push(() => lambdaEndpoint.stop());
  // One client, so one connection pool, per service that invokes: a Step Functions round of
  // thousands of Tasks must not queue the event bus's Reconcile or the HTTP API's requests behind
  // it on one client's sockets (AWS's services invoke independently of each other).
  const invoker = () => createLambdaInvoker({ endpoint: lambdaEndpoint.url, region });
  const lambda = invoker();

  const stateMachines: LocalStateMachine[] = await tracePhase('stepfunctions.definitions', () =>
    stateMachinesFromTemplate(
      resolver,
      options.cacheDir === undefined ? {} : { validated: validatedDefinitionsIn(join(options.cacheDir, 'validated-definitions')) },
    ),
  );
  const executions = createExecutionService({
    stateMachines,
    lambda,
    region,
    lambdaEndpoint: lambdaEndpoint.url,
    log,
    ...(options.maxOpenExecutions === undefined ? {} : { maxOpenExecutions: options.maxOpenExecutions }),
    ...(options.executionRetention === undefined ? {} : { retention: options.executionRetention }),
  });
  const stepFunctions: StepFunctionsEndpoint = await startStepFunctionsEndpoint({ service: executions, port: ports.stepFunctions, log });
  cleanups.push(
    () => stepFunctions.stop(),
    () => executions.shutdown(),
  );
  // Execution status changes go to the template's EventBridge rules. The bus stops before the
  // executions are shut down, so stopping the cloud never reads as an aborted run.
  const bus: EventBus = startEventBus({ rules: eventRulesFromTemplate(resolver, { functions, queues }), lambda: invoker(), sqs: sqsClient, log });
  const unsubscribe = executions.onStatusChange((record) => bus.publish(executionStatusChangeEvent(record, { region, accountId: resolver.accountId })));
  cleanups.push(() => bus.stop(), unsubscribe);

  const mappings: EventSourceMappings = startEventSourceMappings({
    mappings: eventSourceMappingsFromTemplate(resolver, queues),
    sqs: sqsClient,
    lambda: invoker(),
    region,
    log,
  });
  cleanups.push(() => mappings.stop());

  const authority = await createJwtAuthority({
    issuer: options.jwt?.issuer ?? apiUrl,
    audience: options.jwt?.audience ?? ['tessera-local'],
    ...(options.jwt?.tenantClaim === undefined ? {} : { tenantClaim: options.jwt.tenantClaim }),
  });
  const provisioned = await tables;
  log({ level: 'info', component: 'cloud', message: `provisioned ${provisioned.length} tables and ${queues.length} queues` });
  const spec = httpApiFromTemplate(resolver);
  const api: LocalHttpApi | undefined = spec
    ? await startHttpApi({ spec, lambda: invoker(), authority, port: ports.api, log, ...(options.pages ? { pages: options.pages } : {}) })
    : undefined;
  if (api) cleanups.push(() => api.stop());
  log({ level: 'info', component: 'cloud', message: `local cloud ready${api ? ` at ${api.url}` : ''}` });

  return {
    apiUrl: api?.url,
    endpoints: { dynamodb: emulators.dynamodb, sqs, lambda: lambdaEndpoint.url, stepFunctions: stepFunctions.url, api: api?.url },
    region,
    environment,
    outputs: resolveOutputs(resolver),
    resources: { tables: provisioned, queues, functions: summary(functions), stateMachines: summary(stateMachines) },
    mintToken: (mint) => authority.mintToken(mint),
    authority,
    executions,
    lambdaStats: () => lambdaEndpoint.stats(),
    processes: emulators.pids,
    stop,
  };
};
