import type { IAspect } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { IConstruct } from 'constructs';

/**
 * Deploying to an AWS emulator (`-c tessera:emulator=true`, the emulator lane of docs/emulator.md):
 * removes every CloudWatch alarm defined by metric math (`Metrics` instead of one metric), which
 * ministack refuses, rolling the whole stack back. Nothing else in the template changes, so the
 * emulator runs what AWS would; test/infra/emulator.test.ts holds it to that.
 *
 * @example
 * if (emulator) Aspects.of(app).add(new WithoutMetricMathAlarms());
 */
export class WithoutMetricMathAlarms implements IAspect {
  visit(node: IConstruct): void {
    if (!(node instanceof cloudwatch.CfnAlarm) || node.metrics === undefined) return;
    // Nothing refers to these alarms (the dashboard graphs the expressions, not the alarms).
    const parent = node.node.scope;
    if (!parent?.node.tryRemoveChild(node.node.id)) throw new Error(`could not remove the metric-math alarm ${node.node.path}`);
  }
}
