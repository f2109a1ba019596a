#!/usr/bin/env -S npx tsx
/**
 * The tessera CDK app: one `TesseraStack`, checked by cdk-nag's AwsSolutions pack on every synth.
 * Deployment choices come from context; see docs/deploy.md.
 */
import { App, Aspects } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { stackPropsFromContext } from '../lib/infra/app-context';
import { TesseraStack } from '../lib/infra/stack';

const app = new App();
const { stackName, props } = stackPropsFromContext(app.node);
const { CDK_DEFAULT_ACCOUNT: account, CDK_DEFAULT_REGION: region } = process.env;
new TesseraStack(app, stackName, {
  ...props,
  description: 'tessera: serverless fan-out whose answers prove what they covered',
  // Pinned only when the CLI knows both (it does with credentials); otherwise the template stays
  // environment-agnostic instead of inheriting the CLI's us-east-1 fallback.
  env: account && region ? { account, region } : undefined,
});
Aspects.of(app).add(new AwsSolutionsChecks({ verbose: true }));
