import { ChangeMessageVisibilityCommand, GetQueueUrlCommand, type SQSClient } from '@aws-sdk/client-sqs';

/** Seconds before delivery `n + 1` of a failed message: 2, 4, 8… capped at a minute. */
export const backoffSeconds = (receiveCount: number): number => Math.min(60, 2 ** Math.max(1, receiveCount));

/**
 * Brings a failed message back sooner than its queue's visibility timeout. The timeout is sized
 * for the worker's longest run (six times its timeout), which is far too long to wait before
 * retrying a source that answered 503 once.
 *
 * @example
 * const redelivery = createRedelivery({ client: new SQSClient({}) });
 * await redelivery.retryIn(record.eventSourceARN, record.receiptHandle, backoffSeconds(receiveCount));
 */
export const createRedelivery = ({ client }: { client: SQSClient }) => {
  const urls = new Map<string, Promise<string>>();
  const urlOf = (queueArn: string): Promise<string> => {
    const known = urls.get(queueArn);
    if (known) return known;
    const [, , , , account, name] = queueArn.split(':');
    const url = client
      .send(new GetQueueUrlCommand({ QueueName: name, ...(account ? { QueueOwnerAWSAccountId: account } : {}) }))
      .then((result) => result.QueueUrl ?? Promise.reject(new Error(`no URL for queue ${queueArn}`)));
    urls.set(queueArn, url);
    url.catch(() => urls.delete(queueArn));
    return url;
  };
  return {
    async retryIn(queueArn: string, receiptHandle: string, seconds: number): Promise<void> {
      await client.send(new ChangeMessageVisibilityCommand({ QueueUrl: await urlOf(queueArn), ReceiptHandle: receiptHandle, VisibilityTimeout: seconds }));
    },
  };
};
export type Redelivery = ReturnType<typeof createRedelivery>;
