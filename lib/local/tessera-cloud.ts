import { App, CfnOutput, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { cdkJsonContext } from '../infra/cdk-context';
import { TesseraFanOut } from '../infra/fan-out';
import { PACKAGE_ROOT } from '../infra/handler-metadata';
import { loadWorkerRegistry } from '../workers/worker-module';
import { startLocalCloud, type LocalCloud, type LocalCloudPorts } from './cloud';
import type { LocalLog } from './log';
import { viewerPage } from './viewer-site';

/** The issuer and audience the local API's JWT authorizer is configured with. */
export const LOCAL_AUTH = { issuer: 'https://tessera.local', audience: 'tessera-local', tenantClaim: 'custom:tenant' } as const;

const STACK = 'TesseraLocal';

/**
 * Synthesizes the `TesseraFanOut` construct exactly as a deployment would (cdk.json's context),
 * with the local JWT issuer and the given worker module, and without esbuild bundling: the local
 * cloud runs the handler modules themselves, found through each function's `tessera:handler`
 * metadata, with the worker module's registry.
 *
 * @example
 * const template = synthesizeLocalTemplate('examples/app/workers.ts');
 */
export const synthesizeLocalTemplate = (workers: string, region = 'us-east-1'): unknown => {
  const app = new App({
    context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] },
    // The template is never deployed from here; CloudFormation validation would only cost time.
    builtinCloudFormationValidation: false,
  });
  const stack = new Stack(app, STACK, { env: { account: '000000000000', region } });
  const fanOut = new TesseraFanOut(stack, 'FanOut', {
    auth: { issuer: LOCAL_AUTH.issuer, audiences: [LOCAL_AUTH.audience], tenantClaim: LOCAL_AUTH.tenantClaim },
    removalPolicy: RemovalPolicy.DESTROY,
    deletionProtection: false,
    workers: { entry: workers },
  });
  // The same names as TesseraStack's outputs, so the end-to-end suite reads either alike.
  new CfnOutput(stack, 'DeadLetterQueueUrl', { value: fanOut.deadLetterQueue.queueUrl });
  new CfnOutput(stack, 'SubtaskQueueUrls', { value: fanOut.queueUrlsJson });
  return app.synth().getStackByName(STACK).template;
};

export interface TesseraCloudOptions {
  /** The worker module to run (absolute, or relative to the current directory): `examples/app/workers.ts`. */
  readonly workers: string;
  readonly ports?: LocalCloudPorts;
  readonly log?: LocalLog;
  /** Level of the functions' own structured logs. @default 'WARN' */
  readonly functionLogLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
}

/**
 * The whole tessera pipeline on this machine: DynamoDB Local, the SQS emulator, the synthesized
 * state machine, the Lambda handlers, event-source mappings and the HTTP API with JWT auth.
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
  const registry = await loadWorkerRegistry(options.workers);
  return startLocalCloud({
    template: synthesizeLocalTemplate(options.workers),
    repoRoot: PACKAGE_ROOT,
    registry,
    ...(options.ports ? { ports: options.ports } : {}),
    ...(options.log ? { log: options.log } : {}),
    functionEnvironment: { POWERTOOLS_LOG_LEVEL: options.functionLogLevel ?? 'WARN' },
    jwt: { issuer: LOCAL_AUTH.issuer, audience: [LOCAL_AUTH.audience], tenantClaim: LOCAL_AUTH.tenantClaim },
    // The viewer page at `/`: local only, never part of the CDK app.
    pages: viewerPage,
  });
};
