import { Aspects } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, test } from 'vitest';
import { exampleFanOut } from '../../examples/app/cdk';
import { CONTEXT_KEYS, stackPropsFromContext } from '../../lib/infra/app-context';
import { WithoutMetricMathAlarms } from '../../lib/infra/emulator';
import { TesseraStack } from '../../lib/infra/stack';
import { unbundledApp } from './synth';

type Resources = Record<string, { Type: string; Properties?: Record<string, unknown> }>;

/** The example app's template as bin/app.ts builds it, with the `emulator` context flag as given. */
const appTemplate = (emulator: boolean): Record<string, unknown> & { Resources: Resources } => {
  const app = unbundledApp({ [CONTEXT_KEYS.emulator]: String(emulator), [CONTEXT_KEYS.faultInjection]: 'true' });
  const context = stackPropsFromContext(app.node);
  const stack = new TesseraStack(app, context.stackName, {
    ...context.props,
    fanOut: { ...context.props.fanOut, ...exampleFanOut({ faultInjection: context.faultInjection }) },
  });
  if (context.emulator) Aspects.of(app).add(new WithoutMetricMathAlarms());
  return Template.fromStack(stack).toJSON() as Record<string, unknown> & { Resources: Resources };
};

describe('the emulator context flag', () => {
  const onAws = appTemplate(false);
  const onEmulator = appTemplate(true);
  const mathAlarms = Object.entries(onAws.Resources)
    .filter(([, r]) => r.Type === 'AWS::CloudWatch::Alarm' && r.Properties?.Metrics !== undefined)
    .map(([id]) => id);

  test('removes exactly the alarms defined by metric math: the degraded-run rate and unfinished executions', () => {
    // Two of FanOutMonitoring's four alarms are math expressions; the two dead-letter depth alarms
    // watch one metric each and stay.
    expect(mathAlarms.map((id) => id.replace(/[0-9A-F]{8}$/, '')).sort()).toEqual(['FanOutMonitoringDegradedRunRate', 'FanOutMonitoringExecutionsUnfinished']);
    for (const id of mathAlarms) expect(onEmulator.Resources[id]).toBeUndefined();
    const singleMetricAlarms = Object.values(onEmulator.Resources).filter((r) => r.Type === 'AWS::CloudWatch::Alarm');
    expect(singleMetricAlarms).toHaveLength(2);
  });

  test('changes nothing else in the template', () => {
    const withoutMathAlarms = { ...onAws, Resources: Object.fromEntries(Object.entries(onAws.Resources).filter(([id]) => !mathAlarms.includes(id))) };
    expect(onEmulator).toEqual(withoutMathAlarms);
  });
});
