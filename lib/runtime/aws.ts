import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SFNClient } from '@aws-sdk/client-sfn';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { createLedger, type DailyAllowance, type Ledger } from '../ledger';
import { createRunExecutions, type RunExecutions } from '../orchestration/run-execution';
import { createRedelivery, type Redelivery } from '../queue/redelivery';
import { createSubtaskQueue, type SubtaskQueue } from '../queue/subtask-queue';

/**
 * The AWS clients of one function, created once per cold start. Region, credentials and
 * endpoints come from the Lambda environment (`AWS_REGION`, `AWS_ENDPOINT_URL_*`), which is also
 * how the local cloud points them at its emulators.
 */
const tracer = new Tracer();

const traced = <C>(client: C): C => tracer.captureAWSv3Client(client);

/** The run ledger on the function's table. */
export const ledgerFor = (tableName: string, dailyAllowance?: DailyAllowance): Ledger =>
  createLedger({
    client: DynamoDBDocumentClient.from(traced(new DynamoDBClient({})), { marshallOptions: { removeUndefinedValues: true } }),
    tableName,
    ...(dailyAllowance === undefined ? {} : { dailyAllowance }),
  });

/** The subtask queues, one per worker kind. */
export const queueFor = (queueUrls: Readonly<Record<string, string>>): SubtaskQueue =>
  createSubtaskQueue({ client: traced(new SQSClient({})), queueUrls });

/** Run executions on the function's state machine (`stateMachineArn` only matters for `start`). */
export const executionsFor = (stateMachineArn = ''): RunExecutions =>
  createRunExecutions({ client: traced(new SFNClient({})), stateMachineArn });

/** Early redelivery of failed subtask messages (the worker's consume grant covers it). */
export const redeliveryFor = (): Redelivery => createRedelivery({ client: traced(new SQSClient({})) });
