/**
 * The EventBridge event Step Functions sends when an execution changes status, as far as tessera
 * reads it. The CDK rule that routes it, the reconcile handler that closes the run, and the local
 * cloud that emulates the delivery all import these names; none of them imports the CDK.
 */
import { z } from 'zod';

/** `source` and `detail-type` of a Step Functions execution status change. */
export const EXECUTION_STATUS_CHANGE = { source: 'aws.states', detailType: 'Step Functions Execution Status Change' } as const;

/**
 * Statuses in which an execution can end without the state machine recording the run: aborted
 * (StopExecution), timed out (the execution's own timeout), or failed past every Catch (Finalize
 * itself failed, the 25,000-event history limit, a States.Runtime error).
 */
export const UNFINISHED_EXECUTION_STATUSES = ['FAILED', 'TIMED_OUT', 'ABORTED'] as const;
export type UnfinishedExecutionStatus = (typeof UNFINISHED_EXECUTION_STATUSES)[number];

/** The run error code a closed run carries, by the status its execution ended in. */
export const CLOSED_RUN_ERROR_CODES = {
  FAILED: 'ExecutionFailed',
  TIMED_OUT: 'ExecutionTimedOut',
  ABORTED: 'ExecutionAborted',
} as const satisfies Record<UnfinishedExecutionStatus, string>;

/**
 * Errors the run state machine ends an execution with (its Fail states): a step failed after its
 * retries and Finalize recorded the run failed (`runFailed`), or Finalize could not record it
 * (`finalizeFailed`). A run that fails its policy is recorded by Reconcile and its execution
 * succeeds. A status change event names them in `detail.error`.
 */
export const RUN_EXECUTION_ERRORS = { runFailed: 'RunFailed', finalizeFailed: 'FinalizeFailed' } as const;

/**
 * The run error code of a run that Finalize closed after a step failed, whatever the step's own
 * error was: an adapter's error names never reach a run's public `error.code` (docs/api.md,
 * "Run error codes").
 */
export const RUN_ABORTED_ERROR_CODE = 'RunAborted';

/** The input every run execution starts with (the API's StartExecution); later fields are ignored. */
export const RunExecutionInput = z.looseObject({ runId: z.string().min(1), tenantId: z.string().min(1) });

/**
 * The event, as EventBridge delivers it to a target. `detail.input` is the execution's input as
 * JSON text (null when it was too large to include).
 *
 * @example
 * ExecutionStatusChange.safeParse(event).success // true for a FAILED, TIMED_OUT or ABORTED execution
 */
export const ExecutionStatusChange = z.looseObject({
  source: z.literal(EXECUTION_STATUS_CHANGE.source),
  'detail-type': z.literal(EXECUTION_STATUS_CHANGE.detailType),
  detail: z.looseObject({
    executionArn: z.string().min(1),
    stateMachineArn: z.string().min(1),
    name: z.string().min(1),
    status: z.enum(UNFINISHED_EXECUTION_STATUSES),
    input: z.string().nullable().optional(),
    error: z.string().nullable().optional(),
  }),
});
export type ExecutionStatusChange = z.infer<typeof ExecutionStatusChange>;
