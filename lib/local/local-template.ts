import { App, CfnOutput, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { cdkJsonContext } from '../infra/cdk-context';
import { STACK_OUTPUTS } from '../infra/stack-outputs';
import { TesseraFanOut } from '../infra/fan-out';
import { LOCAL_AUTH } from './local-auth';

const STACK = 'TesseraLocal';

/**
 * Synthesizes the `TesseraFanOut` construct exactly as a deployment would (cdk.json's context),
 * with the local JWT issuer and the given worker module, and without esbuild bundling: the local
 * cloud runs the handler modules themselves, found through each function's `tessera:handler`
 * metadata, with the worker module's registry. This is the only module of the local cloud that
 * imports aws-cdk-lib; `startTesseraCloud` imports it only when its template cache misses.
 *
 * @example
 * const template = synthesizeLocalTemplate('examples/app/workers.ts');
 */
export const synthesizeLocalTemplate = (workers: string, region = 'us-east-1', batchSubtasks?: number): unknown => {
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
    ...(batchSubtasks === undefined ? {} : { batchSubtasks }),
  });
  // The same names as TesseraStack's outputs, so the end-to-end suite reads either alike.
  new CfnOutput(stack, STACK_OUTPUTS.deadLetterQueueUrl, { value: fanOut.deadLetterQueue.queueUrl });
  new CfnOutput(stack, STACK_OUTPUTS.subtaskQueueUrls, { value: fanOut.queueUrlsJson });
  return app.synth().getStackByName(STACK).template;
};
