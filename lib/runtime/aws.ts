import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SFNClient } from '@aws-sdk/client-sfn';
import { SQSClient } from '@aws-sdk/client-sqs';
import { STSClient } from '@aws-sdk/client-sts';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createLedger, type DailyAllowance, type Ledger } from '../ledger';
import { createRunExecutions, type RunExecutions } from '../orchestration/run-execution';
import { createRedelivery, type Redelivery } from '../queue/redelivery';
import { createSubtaskQueue, type SubtaskQueue } from '../queue/subtask-queue';
import { tenantCredentials, tenantScopedClient, type LedgerAccess } from './ledger-credentials';

export { ledgerAccessFromEnv } from './ledger-credentials';

/*
 * The AWS clients of one function, created once per cold start. Region, credentials and
 * endpoints come from the Lambda environment (`AWS_REGION`, `AWS_ENDPOINT_URL_*`), which is also
 * how the local cloud points them at its emulators. They are plain SDK clients: tracing is
 * Lambda's and Step Functions' active tracing alone, with no X-Ray SDK in the bundle
 * (docs/deploy.md, "Tracing").
 */

const TRANSLATE = { marshallOptions: { removeUndefinedValues: true } } as const;

/**
 * The ledger's document client: with `tenant-role` access, one that signs each request with the
 * credentials of the tenant the function is acting for (lib/runtime/ledger-credentials.ts); with
 * `local` access or none (reconcile), the function's own credentials.
 */
const ledgerClient = (access: LedgerAccess | undefined): DynamoDBDocumentClient => {
  if (access?.mode !== 'tenant-role') return DynamoDBDocumentClient.from(new DynamoDBClient({}), TRANSLATE);
  const credentials = tenantCredentials({ sts: new STSClient({}), roleArn: access.roleArn });
  return tenantScopedClient({ credentials, newClient: (provider) => new DynamoDBClient({ credentials: provider }), translateConfig: TRANSLATE });
};

/** How a function's ledger reaches its table; see `ledgerFor`. */
export interface LedgerClientOptions {
  /** Tenant-scoped functions pass theirs (`ledgerAccessFromEnv`); reconcile none. */
  readonly access?: LedgerAccess;
  readonly dailyAllowance?: DailyAllowance;
}

/** The run ledger on the function's table. */
export const ledgerFor = (tableName: string, options: LedgerClientOptions = {}): Ledger =>
  createLedger({
    client: ledgerClient(options.access),
    tableName,
    ...(options.dailyAllowance === undefined ? {} : { dailyAllowance: options.dailyAllowance }),
  });

/** The subtask queues, one per worker kind. */
export const queueFor = (queueUrls: Readonly<Record<string, string>>): SubtaskQueue => createSubtaskQueue({ client: new SQSClient({}), queueUrls });

/** Run executions on the function's state machine (`stateMachineArn` only matters for `start`). */
export const executionsFor = (stateMachineArn = ''): RunExecutions => createRunExecutions({ client: new SFNClient({}), stateMachineArn });

/** Early redelivery of failed subtask messages (the worker's consume grant covers it). */
export const redeliveryFor = (): Redelivery => createRedelivery({ client: new SQSClient({}) });
