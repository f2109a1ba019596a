/**
 * The CDK app: one stack holding the tessera fan-out, with this project's worker module.
 * Set your JWT issuer and audience in cdk.json (`issuer`, `audience`) or with `-c issuer=…`.
 */
import { App, Stack } from 'aws-cdk-lib';
import { TesseraFanOut } from '@tessera-fanout/tessera/cdk';

const app = new App();
const stack = new Stack(app, 'TodoReview');
new TesseraFanOut(stack, 'FanOut', {
  auth: { issuer: String(app.node.getContext('issuer')), audiences: [String(app.node.getContext('audience'))] },
  workers: { entry: 'src/workers.ts' },
});
