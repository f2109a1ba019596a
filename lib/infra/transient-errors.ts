/**
 * The errors every Task of the run state machine retries, assembled from the errors modules that
 * define them. This module imports no CDK, so handlers' tests and the infra tests import the same
 * list the state machine is built from.
 */
import { TRANSIENT_LEDGER_ERRORS } from '../ledger/errors';
import { LAMBDA_SERVICE_ERRORS } from '../orchestration/errors';
import { TRANSIENT_QUEUE_ERRORS } from '../queue/errors';
import { AWS_THROTTLING_ERRORS } from '../runtime/errors';

/**
 * Lambda's own transient faults, AWS throttling that outlasted the SDK's retries, and the
 * adapters' transient errors (`WriteConflict`, `EnqueueFailed`). Anything else a handler throws
 * is not retried: the Task's Catch ends the run through Finalize.
 *
 * @example
 * task.addRetry({ errors: [...TRANSIENT_ERRORS], ...RETRY_PROFILES.run });
 */
export const TRANSIENT_ERRORS = [...LAMBDA_SERVICE_ERRORS, ...AWS_THROTTLING_ERRORS, ...TRANSIENT_LEDGER_ERRORS, ...TRANSIENT_QUEUE_ERRORS] as const;
