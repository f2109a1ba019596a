import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as destinations from 'aws-cdk-lib/aws-lambda-destinations';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { NagSuppressions } from 'cdk-nag';
import { Construct } from 'constructs';
import { EXECUTION_STATUS_CHANGE, UNFINISHED_EXECUTION_STATUSES } from '../orchestration/execution-events';

/**
 * How patiently a closing is delivered. EventBridge retries a delivery it could not make
 * (throttling, a function briefly unavailable) for up to a day; Lambda retries a closing that
 * failed in the function twice more. What still fails lands in the dead-letter queue.
 */
export const RUN_CLOSURE_DELIVERY = {
  eventRetryAttempts: 185,
  eventMaxAge: Duration.hours(24),
  functionRetryAttempts: 2,
  functionMaxEventAge: Duration.hours(6),
} as const;

export interface RunClosureProps {
  readonly stateMachine: sfn.IStateMachine;
  /**
   * The function that closes a run: the reconcile function, whose `abort` path Finalize also
   * uses. It accepts the execution status change event as it is delivered.
   */
  readonly closer: lambda.IFunction;
}

/**
 * Closes the run of every execution that ends without recording it. The state machine's own Catch
 * covers a failed step; nothing inside an execution can cover Finalize failing, StopExecution,
 * the execution timeout or the 25,000-event history limit. Step Functions reports each of those
 * as an "Execution Status Change" (FAILED, TIMED_OUT, ABORTED); this rule sends it to the closer,
 * which ends a run still `running` as failed with its coverage and a reason, and leaves a run
 * that already ended exactly as it is.
 *
 * @example
 * const closure = new RunClosure(this, 'RunClosure', { stateMachine, closer: reconcile.function });
 * closure.deadLetterQueue.metricApproximateNumberOfMessagesVisible();
 */
export class RunClosure extends Construct {
  readonly rule: events.Rule;
  /** Closings that could not be delivered or kept failing; each message is the event. */
  readonly deadLetterQueue: sqs.Queue;

  constructor(scope: Construct, id: string, props: RunClosureProps) {
    super(scope, id);
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetter', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    NagSuppressions.addResourceSuppressions(this.deadLetterQueue, [
      {
        id: 'AwsSolutions-SQS3',
        reason: "This queue is itself the dead-letter queue of the run-closure rule target and of the closer function's asynchronous invocations.",
      },
    ]);
    this.rule = new events.Rule(this, 'ExecutionEnded', {
      description: 'Closes the run of a run execution that ended FAILED, TIMED_OUT or ABORTED without recording it',
      eventPattern: {
        source: [EXECUTION_STATUS_CHANGE.source],
        detailType: [EXECUTION_STATUS_CHANGE.detailType],
        detail: { stateMachineArn: [props.stateMachine.stateMachineArn], status: [...UNFINISHED_EXECUTION_STATUSES] },
      },
    });
    this.rule.addTarget(
      new targets.LambdaFunction(props.closer, {
        deadLetterQueue: this.deadLetterQueue,
        retryAttempts: RUN_CLOSURE_DELIVERY.eventRetryAttempts,
        maxEventAge: RUN_CLOSURE_DELIVERY.eventMaxAge,
      }),
    );
    // EventBridge invokes asynchronously: a failure inside the function is retried by Lambda and
    // then sent here, not to the target's dead-letter queue. Step Functions invokes the same
    // function synchronously, which this configuration does not touch.
    props.closer.configureAsyncInvoke({
      retryAttempts: RUN_CLOSURE_DELIVERY.functionRetryAttempts,
      maxEventAge: RUN_CLOSURE_DELIVERY.functionMaxEventAge,
      onFailure: new destinations.SqsDestination(this.deadLetterQueue),
    });
  }
}
