import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { RunStatus } from '../contract';
import { METRIC_DIMENSIONS, METRICS } from '../observability/metrics';
import { runMetric } from './run-metrics';

export interface FanOutMonitoringProps {
  /** The `service` dimension Powertools Metrics puts on every run metric. */
  readonly serviceName: string;
  readonly stateMachine: sfn.StateMachine;
  /** The state machine of a batched round's batches; its unfinished executions count in the same alarm. @default - none */
  readonly batchStateMachine?: sfn.StateMachine;
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
 * the dead-letter queue, and every execution that failed, timed out or was aborted.
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
    this.executionsUnfinished = this.unfinishedExpression(props.serviceName, props.stateMachine, props.batchStateMachine).createAlarm(
      this,
      'ExecutionsUnfinished',
      {
        alarmDescription:
          'A run execution failed, timed out or was aborted other than by a cancel: a step failed after its retries (the run was recorded failed), Finalize failed, or the execution ended past every Catch (the history limit, the execution timeout, a StopExecution not made by a cancel), and the run was closed from the execution status change. A run that fails its policy does not fail its execution; a cancelled run stops its own.',
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      },
    );
    this.runClosureFailed = props.runClosureDeadLetterQueue
      .metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: cloudwatch.Stats.MAXIMUM })
      .createAlarm(this, 'RunClosureFailed', {
        alarmDescription:
          'A run whose execution ended unfinished could not be closed: its status change event is in the run-closure dead-letter queue, and the run may still read running.',
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
    const hourly = { period: RATE_PERIOD };
    const finished = Object.fromEntries(
      FINISHED_STATUSES.map((status) => [`f_${status}`, runMetric(service, METRICS.runsFinished, { [METRIC_DIMENSIONS.status]: status }, hourly)]),
    );
    const total = Object.keys(finished)
      .map((key) => `FILL(${key}, 0)`)
      .join(' + ');
    return new cloudwatch.MathExpression({
      label: 'Degraded run rate',
      expression: `IF((${total}) > 0, FILL(degraded, 0) / (${total}), 0)`,
      usingMetrics: { degraded: runMetric(service, METRICS.runsDegraded, {}, hourly), ...finished },
      period: RATE_PERIOD,
    });
  }

  /**
   * Executions that did not end the way the state machine ends a run it recorded. A run that fails
   * its policy ends its execution SUCCEEDED (Reconcile recorded it), so a FAILED execution always
   * means a fault: a step failed after its retries (Finalize recorded the run, then RunFailed),
   * Finalize itself failed, or the execution failed past every Catch (the 25,000-event history
   * limit, a States.Runtime error). Failed and timed-out executions of both machines are counted
   * from the service's own metrics, so the alarm fires even when the run-closure function cannot
   * run. An ABORTED execution is normally a cancel, which stops the run's execution (and its
   * batches' children with it): so aborts are counted from `RunsClosedOnExecutionEnd` with
   * `executionStatus` ABORTED instead, which the run-closure function emits only for a run that
   * was not cancelled (someone stopped the execution itself); if that function cannot run, the
   * RunClosureFailed alarm fires. A batch child stopped on its own fails its parent's StartBatch,
   * and so its run's execution.
   */
  private unfinishedExpression(serviceName: string, stateMachine: sfn.StateMachine, batchStateMachine?: sfn.StateMachine): cloudwatch.MathExpression {
    const options = { period: Duration.minutes(5), statistic: cloudwatch.Stats.SUM };
    const run: Record<string, cloudwatch.IMetric> = {
      failed: stateMachine.metricFailed(options),
      timedOut: stateMachine.metricTimedOut(options),
      aborted: new cloudwatch.Metric({
        namespace: METRICS.namespace,
        metricName: METRICS.runsClosedOnExecutionEnd,
        dimensionsMap: { service: serviceName, [METRIC_DIMENSIONS.executionStatus]: 'ABORTED' },
        ...options,
      }),
    };
    const batch: Record<string, cloudwatch.IMetric> = batchStateMachine
      ? { batchFailed: batchStateMachine.metricFailed(options), batchTimedOut: batchStateMachine.metricTimedOut(options) }
      : {};
    return new cloudwatch.MathExpression({
      label: 'Executions that failed, timed out or were aborted (not by a cancel)',
      expression: Object.keys({ ...run, ...batch })
        .map((name) => `FILL(${name}, 0)`)
        .join(' + '),
      usingMetrics: { ...run, ...batch },
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
        left: [
          props.stateMachine.metricSucceeded(),
          props.stateMachine.metricFailed(),
          props.stateMachine.metricTimedOut(),
          props.stateMachine.metricAborted(),
        ],
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
