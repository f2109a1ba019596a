/**
 * A deliberately broken deployment, for `npm run test:emulator -- --break=worker-esm`: the example
 * app exactly as bin/app.ts builds it, less the event-source mapping from the `tax-statements`
 * queue to the worker function. Tax subtasks then sit in their queue until their deadlines seal
 * them, so the lane must fail at the tests that need a tax worker. It shows the lane can fail;
 * it is never deployed anywhere else.
 */
import { App, Aspects, Stack, type IAspect } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { exampleFanOut } from '../../examples/app/cdk';
import { stackPropsFromContext } from '../../lib/infra/app-context';
import { WithoutMetricMathAlarms } from '../../lib/infra/emulator';
import { TesseraStack } from '../../lib/infra/stack';

const BROKEN_KIND = 'tax-statements';

class WithoutEventSourceMapping implements IAspect {
  constructor(private readonly queueArn: string) {}
  visit(node: IConstruct): void {
    if (!(node instanceof lambda.CfnEventSourceMapping)) return;
    const stack = Stack.of(node);
    if (JSON.stringify(stack.resolve(node.eventSourceArn)) !== JSON.stringify(stack.resolve(this.queueArn))) return;
    node.node.scope?.node.tryRemoveChild(node.node.id);
  }
}

const app = new App();
const { stackName, faultInjection, emulator, props } = stackPropsFromContext(app.node);
const { CDK_DEFAULT_ACCOUNT: account, CDK_DEFAULT_REGION: region } = process.env;
const stack = new TesseraStack(app, stackName, {
  ...props,
  fanOut: { ...props.fanOut, ...exampleFanOut({ faultInjection }) },
  description: 'tessera, deliberately broken: no event-source mapping for the tax-statements queue',
  env: account && region ? { account, region } : undefined,
});
const queue = stack.fanOut.queues[BROKEN_KIND];
if (!queue) throw new Error(`the example app has no ${BROKEN_KIND} queue`);
Aspects.of(app).add(new AwsSolutionsChecks({ verbose: true }));
if (emulator) Aspects.of(app).add(new WithoutMetricMathAlarms());
Aspects.of(app).add(new WithoutEventSourceMapping(queue.queueArn));
