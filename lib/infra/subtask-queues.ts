import { Duration, Stack } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DEFAULT_KIND_CONCURRENCY, MAX_RECEIVE_COUNT, type WorkerKindConfig } from './defaults';

/**
 * AWS guidance for SQS event sources: a visibility timeout of six times the function timeout, so
 * a message is not redelivered while Lambda still retries a throttled batch.
 */
export const VISIBILITY_TIMEOUT_FACTOR = 6;

export interface SubtaskQueuesProps {
  readonly workerKinds: readonly WorkerKindConfig[];
  /** The worker function's timeout; the visibility timeout is derived from it. */
  readonly workerTimeout: Duration;
  /** The event source's batching window, added to the visibility timeout. */
  readonly batchingWindow: Duration;
}

/**
 * One standard queue per worker kind, so each kind's concurrency is capped on its own event
 * source mapping, all redriving to one shared dead-letter queue after {@link MAX_RECEIVE_COUNT}
 * receives. Every queue is SQS-SSE encrypted and refuses non-TLS requests.
 *
 * @example
 * const queues = new SubtaskQueues(this, 'Queues', { workerKinds, workerTimeout, batchingWindow });
 * queues.grantSend(dispatch);
 * queues.attachWorker(worker.function, { batchSize: 5 });
 */
export class SubtaskQueues extends Construct {
  readonly deadLetterQueue: sqs.Queue;
  /** Queue of each worker kind, by kind name. */
  readonly queues: Readonly<Record<string, sqs.Queue>>;
  private readonly kinds: readonly WorkerKindConfig[];
  private readonly batchingWindow: Duration;

  constructor(scope: Construct, id: string, props: SubtaskQueuesProps) {
    super(scope, id);
    this.kinds = props.workerKinds;
    this.batchingWindow = props.batchingWindow;
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetter', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    const visibilityTimeout = Duration.seconds(props.workerTimeout.toSeconds() * VISIBILITY_TIMEOUT_FACTOR + props.batchingWindow.toSeconds());
    this.queues = Object.fromEntries(
      props.workerKinds.map(({ kind }) => [
        kind,
        new sqs.Queue(this, kind, {
          encryption: sqs.QueueEncryption.SQS_MANAGED,
          enforceSSL: true,
          visibilityTimeout,
          // A subtask outlives its deadline by at most minutes; a day covers any redrive window.
          retentionPeriod: Duration.days(1),
          deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: MAX_RECEIVE_COUNT },
        }),
      ]),
    );
  }

  /**
   * The `QUEUE_URLS` variable of the dispatch function: a JSON object from kind to queue URL.
   *
   * @example
   * dispatch.addEnvironment('QUEUE_URLS', queues.queueUrlsJson());
   */
  queueUrlsJson(): string {
    const urls = Object.fromEntries(Object.entries(this.queues).map(([kind, queue]) => [kind, queue.queueUrl]));
    return Stack.of(this).toJsonString(urls);
  }

  /** Lets `grantee` send to every kind queue (never to the dead-letter queue). */
  grantSend(grantee: iam.IGrantable): void {
    for (const queue of Object.values(this.queues)) queue.grantSendMessages(grantee);
  }

  /**
   * Connects `worker` to every kind queue with partial batch responses, so one failed message is
   * retried alone while its siblings are deleted, and with the kind's concurrency cap.
   */
  attachWorker(worker: lambda.IFunction, options: { readonly batchSize: number }): void {
    for (const { kind, maxConcurrency } of this.kinds) {
      const queue = this.queues[kind];
      if (!queue) continue;
      worker.addEventSource(
        new SqsEventSource(queue, {
          batchSize: options.batchSize,
          maxBatchingWindow: this.batchingWindow,
          reportBatchItemFailures: true,
          maxConcurrency: maxConcurrency ?? DEFAULT_KIND_CONCURRENCY,
        }),
      );
    }
  }
}
