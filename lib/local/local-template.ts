import { App, CfnOutput, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { cdkJsonContext } from '../infra/cdk-context';
import { STACK_OUTPUTS } from '../infra/stack-outputs';
import { TesseraFanOut, type TesseraFanOutProps } from '../infra/fan-out';
import type { LocalFanOutProps } from '../infra/fan-out-metadata';
import { LOCAL_AUTH } from './local-auth';

const STACK = 'TesseraLocal';

/** The construct's props for the given local settings; those left out keep the construct's defaults. */
const constructProps = (props: Partial<LocalFanOutProps>): Partial<TesseraFanOutProps> => {
  const seconds = (value: number) => Duration.seconds(value);
  return {
    ...(props.kinds === undefined ? {} : { kinds: props.kinds }),
    ...(props.workerTimeoutSeconds === undefined ? {} : { workerTimeout: seconds(props.workerTimeoutSeconds) }),
    ...(props.workerBatchingWindowSeconds === undefined ? {} : { workerBatchingWindow: seconds(props.workerBatchingWindowSeconds) }),
    ...(props.maxDeadlineSeconds === undefined ? {} : { maxDeadline: seconds(props.maxDeadlineSeconds) }),
    ...(props.mapMaxConcurrency === undefined ? {} : { mapMaxConcurrency: props.mapMaxConcurrency }),
    ...(props.batchConcurrency === undefined ? {} : { batchConcurrency: props.batchConcurrency }),
    ...(props.batchSubtasks === undefined ? {} : { batchSubtasks: props.batchSubtasks }),
    ...(props.tenantDailyAllowance === undefined ? {} : { tenantDailyAllowance: props.tenantDailyAllowance }),
  };
};

/**
 * Synthesizes the `TesseraFanOut` construct exactly as a deployment would (cdk.json's context),
 * with the local JWT issuer, the given worker module and fan-out props (the project's app's, read
 * from its cloud assembly; the construct's defaults where none are given), and without esbuild
 * bundling: the local cloud runs the handler modules themselves, found through each function's
 * `tessera:handler` metadata, with the worker module's registry. The construct validates the
 * props as it does in the app, naming a bad field. This is the only module of the local cloud that
 * imports aws-cdk-lib; `startTesseraCloud` imports it only when its template cache misses.
 *
 * @example
 * const template = synthesizeLocalTemplate('examples/app/workers.ts');
 * const strict = synthesizeLocalTemplate('src/workers.ts', 'us-east-1', { maxDeadlineSeconds: 60 });
 */
export const synthesizeLocalTemplate = (workers: string, region = 'us-east-1', fanOut: Partial<LocalFanOutProps> = {}): unknown => {
  const app = new App({
    context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] },
    // The template is never deployed from here; CloudFormation validation would only cost time.
    builtinCloudFormationValidation: false,
  });
  const stack = new Stack(app, STACK, { env: { account: '000000000000', region } });
  const fanOutConstruct = new TesseraFanOut(stack, 'FanOut', {
    ...constructProps(fanOut),
    auth: { issuer: LOCAL_AUTH.issuer, audiences: [LOCAL_AUTH.audience], tenantClaim: LOCAL_AUTH.tenantClaim },
    removalPolicy: RemovalPolicy.DESTROY,
    deletionProtection: false,
    workers: { entry: workers },
  });
  // The same names as TesseraStack's outputs, so the end-to-end suite reads either alike.
  new CfnOutput(stack, STACK_OUTPUTS.deadLetterQueueUrl, { value: fanOutConstruct.deadLetterQueue.queueUrl });
  new CfnOutput(stack, STACK_OUTPUTS.subtaskQueueUrls, { value: fanOutConstruct.queueUrlsJson });
  return app.synth().getStackByName(STACK).template;
};
