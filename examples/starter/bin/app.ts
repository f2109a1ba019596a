/**
 * The CDK app: one stack holding the tessera fan-out, with this project's worker module.
 * Set your JWT issuer and audience in cdk.json (`issuer`, `audience`) or with `-c issuer=…`.
 * cdk-nag's AwsSolutions rules check every resource: an unsuppressed finding fails `cdk synth`.
 */
import { App, Aspects, Stack } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { TesseraFanOut } from '@tessera-fanout/tessera/cdk';

const app = new App();
Aspects.of(app).add(new AwsSolutionsChecks({ verbose: true }));
const stack = new Stack(app, 'TodoReview');
new TesseraFanOut(stack, 'FanOut', {
  auth: { issuer: String(app.node.getContext('issuer')), audiences: [String(app.node.getContext('audience'))] },
  workers: { entry: 'src/workers.ts' },
});
