import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { NagSuppressions } from 'cdk-nag';
import { Construct } from 'constructs';
import { METRICS } from '../observability/metrics';
import { POWERTOOLS_ENV } from '../runtime/environment';
import { HANDLER_METADATA_KEY, PACKAGE_ROOT } from './handler-metadata';

/*
 * NodejsFunction wants a lock file to pick the package manager and the project root. A clone has
 * package-lock.json; an installed copy of this package does not (npm never packs it), and its
 * package.json serves equally well, since nothing is installed at bundling time.
 */
const PACKAGE_LOCK_FILE = [join(PACKAGE_ROOT, 'package-lock.json'), join(PACKAGE_ROOT, 'package.json')].find((f) => existsSync(f));

export { HANDLER_METADATA_KEY, PACKAGE_ROOT };

/**
 * The newest Node.js runtime this aws-cdk-lib knows. cdk-nag's AwsSolutions-L1 compares against
 * `Runtime.ALL`, so anything older is a finding; Node 24 is also what the handlers are written for.
 */
export const FUNCTION_RUNTIME = lambda.Runtime.NODEJS_24_X;

/*
 * ESM output keeps top-level await and tree-shaking; the banner gives bundled CommonJS
 * dependencies (parts of the AWS SDK's and Powertools' dependency trees) the `require` they expect.
 */
const ESM_REQUIRE_BANNER = "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);";

export interface TesseraFunctionProps {
  /**
   * Handler module, relative to the package root (`PACKAGE_ROOT`): `functions/dispatch.ts`. It is
   * the function's `tessera:handler` metadata, and what esbuild bundles unless `bundleEntry` is set.
   */
  readonly entry: string;
  /**
   * Absolute path of the module esbuild bundles, exporting `handler`, when it is not `entry` itself
   * (the construct's generated entry that joins a handler module with the worker module).
   * @default - `entry`
   */
  readonly bundleEntry?: string;
  /**
   * The project being bundled: NodejsFunction's `projectRoot` and `depsLockFilePath`; `bundleEntry`
   * must be below `root`. @default - the package root and its lock file
   */
  readonly project?: { readonly root: string; readonly lockFile: string };
  /** Powertools service name; also the `service` dimension of every metric the function emits. */
  readonly serviceName: string;
  /** What the function does, for the console. */
  readonly description: string;
  /** @default Duration.seconds(30) */
  readonly timeout?: Duration;
  /** @default 512 */
  readonly memorySize?: number;
  /** Variables added to the Powertools defaults. */
  readonly environment?: Readonly<Record<string, string>>;
  /** @default logs.RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
  /** What happens to the log group when the function is removed. @default RemovalPolicy.RETAIN */
  readonly logRemovalPolicy?: RemovalPolicy;
  /** @default 'INFO' */
  readonly logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
}

/**
 * A tessera Lambda function with the project's defaults in one place: Node 24 on arm64, X-Ray
 * active tracing, an explicit log group with retention, a role that may write only to that log
 * group, local esbuild bundling to minified ESM with source maps, Powertools environment, and
 * the `tessera:handler` metadata.
 *
 * @example
 * const dispatch = new TesseraFunction(this, 'Dispatch', {
 *   entry: 'functions/dispatch.ts', serviceName: 'tessera', description: 'plans and enqueues a round',
 *   environment: { TABLE_NAME: table.tableName },
 * });
 * table.grantReadWriteData(dispatch);
 */
export class TesseraFunction extends Construct implements iam.IGrantable {
  readonly function: NodejsFunction;
  /** Absolute path of the module esbuild bundles. */
  readonly bundleEntry: string;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;
  readonly grantPrincipal: iam.IPrincipal;

  constructor(scope: Construct, id: string, props: TesseraFunctionProps) {
    super(scope, id);
    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: props.logRemovalPolicy ?? RemovalPolicy.RETAIN,
    });
    // An own role instead of AWSLambdaBasicExecutionRole: that managed policy may write to any
    // log group in the account, this one only to the function's own.
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `${props.entry}: ${props.description}`,
    });
    this.logGroup.grantWrite(this.role);
    this.grantPrincipal = this.role;
    this.bundleEntry = props.bundleEntry ?? join(PACKAGE_ROOT, props.entry);
    this.function = new NodejsFunction(this, 'Function', {
      entry: this.bundleEntry,
      handler: 'handler',
      projectRoot: props.project?.root ?? PACKAGE_ROOT,
      depsLockFilePath: props.project?.lockFile ?? PACKAGE_LOCK_FILE,
      runtime: FUNCTION_RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      description: props.description,
      timeout: props.timeout ?? Duration.seconds(30),
      memorySize: props.memorySize ?? 512,
      tracing: lambda.Tracing.ACTIVE,
      logGroup: this.logGroup,
      role: this.role,
      environment: {
        [POWERTOOLS_ENV.serviceName]: props.serviceName,
        [POWERTOOLS_ENV.metricsNamespace]: METRICS.namespace,
        [POWERTOOLS_ENV.logLevel]: props.logLevel ?? 'INFO',
        NODE_OPTIONS: '--enable-source-maps',
        ...props.environment,
      },
      bundling: {
        format: OutputFormat.ESM,
        mainFields: ['module', 'main'],
        banner: ESM_REQUIRE_BANNER,
        // Bundling the SDK pins the version the code was tested with instead of whatever the
        // runtime ships, and tree-shaking keeps only the clients a handler imports.
        bundleAwsSDK: true,
        minify: true,
        sourceMap: true,
        sourcesContent: false,
      },
    });
    (this.function.node.defaultChild as lambda.CfnFunction).addMetadata(HANDLER_METADATA_KEY, props.entry);
    NagSuppressions.addResourceSuppressions(
      this.role,
      [
        {
          id: 'AwsSolutions-IAM5',
          reason: 'X-Ray PutTraceSegments and PutTelemetryRecords support no resource-level permissions (Lambda active tracing).',
          appliesTo: ['Resource::*'],
        },
      ],
      true,
    );
  }
}
