import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { METRICS } from '../observability/metrics';

/** One of the run metrics the reconcile and worker functions emit (lib/observability/metrics.ts). */
export type RunMetricName = Exclude<(typeof METRICS)[keyof typeof METRICS], typeof METRICS.namespace>;

/** The period and statistic of a run metric unless the caller's `MetricOptions` say otherwise: each is a count. */
const RUN_METRIC_DEFAULTS = { period: Duration.minutes(5), statistic: cloudwatch.Stats.SUM } as const;

/**
 * A run metric of one fan-out, as CDK constructs build theirs: the `Tessera` namespace, the
 * `service` dimension Powertools Metrics puts on every metric (the fan-out's `serviceName`), the
 * metric's own dimension when it has one, the sum over 5 minutes; `props` override any of it
 * (`dimensionsMap` is merged over the fan-out's). The construct's `metric*()` methods and its
 * alarms both build their metrics here.
 *
 * @example
 * runMetric('tessera', METRICS.runsFinished, { status: 'failed' }, { period: Duration.hours(1) })
 */
export const runMetric = (
  serviceName: string,
  metricName: RunMetricName,
  dimensions: Readonly<Record<string, string>> = {},
  props: cloudwatch.MetricOptions = {},
): cloudwatch.Metric =>
  new cloudwatch.Metric({
    ...RUN_METRIC_DEFAULTS,
    ...props,
    namespace: METRICS.namespace,
    metricName,
    dimensionsMap: { service: serviceName, ...dimensions, ...props.dimensionsMap },
  });
