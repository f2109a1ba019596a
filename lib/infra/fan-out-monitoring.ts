import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { RunStatus } from '../contract';
import { METRIC_DIMENSIONS, METRICS } from '../observability/metrics';
import type { UnfinishedExecutionStatus } from '../orchestration/execution-events';

export interface FanOutMonitoringProps {
  /** The `service` dimension Powertools Metrics puts on every run metric. */
  readonly serviceName: string;
  readonly stateMachine: sfn.StateMachine;
  readonly deadLetterQueue: sqs.IQueue;
  /** Where closings of unfinished executions go when they cannot be delivered or keep failing. */
  readonly runClosureDeadLetterQueue: sqs.IQueue;
  /** Functions whose errors and throttles the dashboard shows, by name. */
  readonly functions: Readonly<Record<string, lambda.IFunction>>;
  /** Fraction of finished runs with `coverage.complete: false` that raises the alarm. */
  readonly degradedRunRateThreshold: number;
  readonly alarmActions: readonly cloudwatch.IAlarmAction[];
}

/** Every status a run can end in; `running` is the only one that is not an end. */
const FINISHED_STATUSES = RunStatus.options.filter((status) => status !== 'running');

const RATE_PERIOD = Duration.hours(1);

/**
 * Alarms and a dashboard for one fan-out: the degraded-run rate (the Scout example's lesson: a run that
 * answers from four of five workers looks healthy on every per-component metric), messages in
 * the dead-letter queue, and executions that ended without reaching a final state of their own.
 *
 * @example
 * const monitoring = new FanOutMonitoring(this, 'Monitoring', { serviceName: 'tessera',
 *   stateMachine, deadLetterQueue, functions: { api, worker }, degradedRunRateThreshold: 0.05,
 *   alarmActions: [new SnsAction(topic)] });
 */
export class FanOutMonitoring extends Construct {
  readonly degradedRunRate: cloudwatch.Alarm;
  readonly deadLetterDepth: cloudwatch.Alarm;
  readonly executionsUnfinished: cloudwatch.Alarm;
  readonly runClosureFailed: cloudwatch.Alarm;
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: FanOutMonitoringProps) {
    super(scope, id);
    const rate = this.degradedRateExpression(props.serviceName);
    this.degradedRunRate = rate.createAlarm(this, 'DegradedRunRate', {
      alarmDescription: `More than ${props.degradedRunRateThreshold * 100}% of runs finished in the last hour answered with incomplete coverage.`,
      threshold: props.degradedRunRateThreshold,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.deadLetterDepth = props.deadLetterQueue
      .metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: cloudwatch.Stats.MAXIMUM })
      .createAlarm(this, 'DeadLetterDepth', {
        alarmDescription: 'Subtask messages reached the dead-letter queue: a worker failed the same message three times.',
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    this.executionsUnfinished = this.unfinishedExpression(props.stateMachine, props.serviceName).createAlarm(this, 'ExecutionsUnfinished', {
      alarmDescription:
        'A run execution timed out, was aborted, or failed without recording its run (Finalize failed, or a failure past every Catch), so its run never reached Finalize and was closed from the execution status change.',
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.runClosureFailed = props.runClosureDeadLetterQueue
      .metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: cloudwatch.Stats.MAXIMUM })
      .createAlarm(this, 'RunClosureFailed', {
        alarmDescription: 'A run whose execution ended unfinished could not be closed: its status change event is in the run-closure dead-letter queue, and the run may still read running.',
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    for (const alarm of [this.degradedRunRate, this.deadLetterDepth, this.executionsUnfinished, this.runClosureFailed]) {
      alarm.addAlarmAction(...props.alarmActions);
    }
    this.dashboard = this.buildDashboard(props, rate);
  }

  /**
   * Degraded runs over finished runs. `RunsFinished` carries a `status` dimension, so its total
   * is the sum over the finished statuses; FILL and IF keep an idle hour at 0, not missing.
   */
  private degradedRateExpression(service: string): cloudwatch.MathExpression {
    const runMetric = (metricName: string, extra: Record<string, string> = {}) =>
      new cloudwatch.Metric({
        namespace: METRICS.namespace,
        metricName,
        dimensionsMap: { service, ...extra },
        statistic: cloudwatch.Stats.SUM,
        period: RATE_PERIOD,
      });
    const finished = Object.fromEntries(
      FINISHED_STATUSES.map((status) => [`f_${status}`, runMetric(METRICS.runsFinished, { [METRIC_DIMENSIONS.status]: status })]),
    );
    const total = Object.keys(finished).map((key) => `FILL(${key}, 0)`).join(' + ');
    return new cloudwatch.MathExpression({
      label: 'Degraded run rate',
      expression: `IF((${total}) > 0, FILL(degraded, 0) / (${total}), 0)`,
      usingMetrics: { degraded: runMetric(METRICS.runsDegraded), ...finished },
      period: RATE_PERIOD,
    });
  }

  /**
   * Executions that ended without recording their run. Timed-out and aborted executions never do;
   * a failed one usually did (a run that fails its policy fails its execution too), so failures
   * are counted from the runs the closer found still open after a FAILED execution.
   */
  private unfinishedExpression(stateMachine: sfn.StateMachine, service: string): cloudwatch.MathExpression {
    const options = { period: Duration.minutes(5), statistic: cloudwatch.Stats.SUM };
    const failedOpen = new cloudwatch.Metric({
      namespace: METRICS.namespace,
      metricName: METRICS.runsClosedOnExecutionEnd,
      dimensionsMap: { service, [METRIC_DIMENSIONS.executionStatus]: 'FAILED' satisfies UnfinishedExecutionStatus },
      ...options,
    });
    return new cloudwatch.MathExpression({
      label: 'Executions that ended without recording their run',
      expression: 'FILL(timedOut, 0) + FILL(aborted, 0) + FILL(failedOpen, 0)',
      usingMetrics: { timedOut: stateMachine.metricTimedOut(options), aborted: stateMachine.metricAborted(options), failedOpen },
      period: options.period,
    });
  }

  private buildDashboard(props: FanOutMonitoringProps, rate: cloudwatch.MathExpression): cloudwatch.Dashboard {
    const dashboard = new cloudwatch.Dashboard(this, 'Dashboard');
    const functions = Object.entries(props.functions);
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({ title: 'Degraded run rate', left: [rate], width: 8 }),
      new cloudwatch.GraphWidget({
        title: 'Executions',
        left: [props.stateMachine.metricSucceeded(), props.stateMachine.metricFailed(), props.stateMachine.metricTimedOut()],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Dead-letter queue depth',
        left: [props.deadLetterQueue.metricApproximateNumberOfMessagesVisible()],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Function errors',
        left: functions.map(([name, fn]) => fn.metricErrors({ label: name })),
        width: 12,
      }),
      new cloudwatch.GraphWidget({
        title: 'Function throttles',
        left: functions.map(([name, fn]) => fn.metricThrottles({ label: name })),
        width: 12,
      }),
    );
    return dashboard;
  }
}
