/**
 * The environment of each function, named once. The construct (lib/infra/fan-out.ts) sets these
 * variables and each handler parses them with its schema below, both through these names, so a
 * renamed variable fails to compile instead of failing a cold start on AWS. CDK-free, so handlers
 * and tests import it without the CDK.
 */
import { z } from 'zod';
import { intVariable, jsonVariable } from './config';

/**
 * The variables tessera's own functions read.
 *
 * @example
 * fn.addEnvironment(ENV.stateMachineArn, stateMachine.stateMachineArn);
 */
export const ENV = {
  /** The ledger table (every function). */
  tableName: 'TABLE_NAME',
  /** The state machine the api starts runs on. */
  stateMachineArn: 'STATE_MACHINE_ARN',
  /** The deadline horizon in seconds (api, dispatch). */
  maxDeadlineSeconds: 'MAX_DEADLINE_SECONDS',
  /** The JWT claim holding the tenant (api). */
  tenantClaim: 'TENANT_CLAIM',
  /** JSON array of the kinds this deployment has queues for (api). */
  workerKinds: 'WORKER_KINDS',
  /** JSON object: worker kind → subtasks it runs at once, `maxConcurrency × batchSize` (api). */
  workerCapacity: 'WORKER_CAPACITY',
  /** JSON object: worker kind → queue URL (dispatch; deadline, which enqueues hedge copies). */
  queueUrls: 'QUEUE_URLS',
  /** Subtasks per batch: dispatch writes each round as batches of this many, one child execution each (dispatch). */
  batchSubtasks: 'BATCH_SUBTASKS',
  /** The claim lease in seconds, equal to the worker's timeout (worker). */
  leaseSeconds: 'LEASE_SECONDS',
  /** The queues' redrive count (worker). */
  maxReceiveCount: 'MAX_RECEIVE_COUNT',
  /** A tenant's daily allowance (worker). */
  tenantDailyModelCalls: 'TENANT_DAILY_MODEL_CALLS',
  tenantDailyCostLimit: 'TENANT_DAILY_COST_LIMIT',
  /**
   * How a tenant-scoped function (api, dispatch, deadline, worker) reaches the ledger:
   * `tenant-role`, the construct's setting, assumes {@link ENV.ledgerAccessRoleArn} once per
   * tenant with a session policy naming that tenant's keys; `local`, set only by the local cloud,
   * uses the process's own credentials against an emulator (lib/runtime/ledger-credentials.ts).
   */
  ledgerAccess: 'LEDGER_ACCESS',
  /** The function's ledger-access role, which only that function's role may assume. */
  ledgerAccessRoleArn: 'LEDGER_ACCESS_ROLE_ARN',
} as const;

/**
 * The Powertools variables the construct sets on every function and `createLogger` /
 * `createMetrics` read (Powertools itself reads them too).
 */
export const POWERTOOLS_ENV = {
  serviceName: 'POWERTOOLS_SERVICE_NAME',
  logLevel: 'POWERTOOLS_LOG_LEVEL',
  metricsNamespace: 'POWERTOOLS_METRICS_NAMESPACE',
} as const;

const table = { [ENV.tableName]: z.string().min(1) };
const maxDeadline = { [ENV.maxDeadlineSeconds]: intVariable(900) };
const queueUrls = { [ENV.queueUrls]: jsonVariable(z.record(z.string(), z.string().min(1))) };

/**
 * Each function's own variables, parsed once per cold start with `parseConfig`. The model
 * variables (`MODEL_ENV`, lib/workers/models/config.ts) are parsed apart by the functions that
 * use a model.
 *
 * @example
 * const config = parseConfig(FUNCTION_CONFIG.deadline, process.env); // config.TABLE_NAME
 */
export const FUNCTION_CONFIG = {
  api: z.object({
    ...table,
    ...maxDeadline,
    [ENV.stateMachineArn]: z.string().min(1),
    [ENV.tenantClaim]: z.string().min(1).default('custom:tenant'),
    /** The kinds this deployment has queues for; a plan may use only these. */
    [ENV.workerKinds]: jsonVariable(z.array(z.string())),
    /** Subtasks each kind runs at once; the planner warns when a kind cannot meet its deadlines. */
    [ENV.workerCapacity]: jsonVariable(z.record(z.string(), z.int().min(1))).optional(),
  }),
  dispatch: z.object({ ...table, ...maxDeadline, ...queueUrls, [ENV.batchSubtasks]: intVariable() }),
  /** The kind queues too: its Hedge step enqueues a hedged subtask's copies (docs/hedging.md). */
  deadline: z.object({ ...table, ...queueUrls }),
  worker: z.object({
    ...table,
    [ENV.leaseSeconds]: intVariable(),
    [ENV.maxReceiveCount]: intVariable(3),
    [ENV.tenantDailyModelCalls]: intVariable(),
    [ENV.tenantDailyCostLimit]: intVariable(),
  }),
  reconcile: z.object({ ...table }),
} as const;

/** The functions of a deployment, by the module name under functions/. */
export type FunctionName = keyof typeof FUNCTION_CONFIG;
