#!/usr/bin/env -S npx tsx
/**
 * The example app's CDK app: one `TesseraStack` running the example worker kinds
 * (examples/app), checked by cdk-nag's AwsSolutions pack on every synth. Deployment choices come
 * from context; see docs/deploy.md.
 */
import { App, Aspects } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { exampleFanOut } from '../examples/app/cdk';
import { stackPropsFromContext } from '../lib/infra/app-context';
import { WithoutMetricMathAlarms } from '../lib/infra/emulator';
import { TesseraStack } from '../lib/infra/stack';

const app = new App();
const { stackName, faultInjection, emulator, props } = stackPropsFromContext(app.node);
const { CDK_DEFAULT_ACCOUNT: account, CDK_DEFAULT_REGION: region } = process.env;
new TesseraStack(app, stackName, {
  ...props,
  fanOut: { ...props.fanOut, ...exampleFanOut({ faultInjection }) },
  description: 'tessera: serverless fan-out whose answers prove what they covered',
  // Pinned only when the CLI knows both (it does with credentials); otherwise the template stays
  // environment-agnostic instead of inheriting the CLI's us-east-1 fallback.
  env: account && region ? { account, region } : undefined,
});
Aspects.of(app).add(new AwsSolutionsChecks({ verbose: true }));
// Only for an AWS emulator, which refuses metric-math alarms (docs/emulator.md).
if (emulator) Aspects.of(app).add(new WithoutMetricMathAlarms());
