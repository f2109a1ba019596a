/** Errors of the Lambda runtime glue: configuration and request boundaries. */

/** Base of the runtime glue's errors; catch it to handle any of them. */
export class RuntimeError extends Error {
  override readonly name: string = 'RuntimeError';
}

/** A function's environment is missing or has a malformed variable. Fails the cold start loudly. */
export class ConfigError extends RuntimeError {
  override readonly name = 'ConfigError';
  constructor(
    readonly variables: readonly { name: string; problem: string }[],
    options?: ErrorOptions,
  ) {
    super(`invalid function configuration: ${variables.map((v) => `${v.name} ${v.problem}`).join('; ')}`, options);
  }
}

/**
 * A tenant-scoped ledger client was asked to send a request while its function was acting for no
 * tenant (no `actingFor` around the call): a wiring bug. Refused before any credentials are used.
 */
export class NoTenantBound extends RuntimeError {
  override readonly name = 'NoTenantBound';
  constructor(
    readonly operation: string,
    options?: ErrorOptions,
  ) {
    super(`ledger request ${operation} sent while acting for no tenant; wrap the work in actingFor(tenantId, …)`, options);
  }
}

/** STS answered AssumeRole without credentials. */
export class LedgerCredentialsUnavailable extends RuntimeError {
  override readonly name = 'LedgerCredentialsUnavailable';
  constructor(
    readonly roleArn: string,
    options?: ErrorOptions,
  ) {
    super(`AssumeRole of ${roleArn} returned no credentials`, options);
  }
}

/** A Step Functions task or SQS message did not match its schema: a wiring bug, not user input. */
export class InvalidTaskInput extends RuntimeError {
  override readonly name = 'InvalidTaskInput';
  constructor(
    readonly task: string,
    readonly issues: readonly string[],
    options?: ErrorOptions,
  ) {
    super(`invalid input for ${task}: ${issues.join('; ')}`, options);
  }
}

/** The stored request no longer plans (it did when the API accepted it): a deployment changed under the run. */
export class PlanRejected extends RuntimeError {
  override readonly name = 'PlanRejected';
  constructor(
    readonly runId: string,
    readonly problems: readonly string[],
    options?: ErrorOptions,
  ) {
    super(`run ${runId} cannot be planned: ${problems.slice(0, 5).join('; ')}`, options);
  }
}

/**
 * Await ran after its subtask's deadline (a retried Await, say). Not retryable: the state
 * machine catches it, waits for the deadline, and seals.
 */
export class AwaitTooLate extends RuntimeError {
  override readonly name = 'AwaitTooLate';
  constructor(
    readonly subtaskId: string,
    readonly deadline: string,
    options?: ErrorOptions,
  ) {
    super(`subtask ${subtaskId}: the deadline ${deadline} has passed; nothing left to await`, options);
  }
}

/**
 * Every record of an SQS batch failed. Thrown, as Powertools' batch processor throws its
 * `FullBatchFailureError`, instead of answering every record in `batchItemFailures`: the
 * invocation then counts in Lambda's `Errors` metric, and the event-source mapping backs off its
 * polling, as it does for a failing function. The records return to the queue either way.
 *
 * @example
 * throw new FullBatchFailure(3, [new Error('boom')]);
 */
export class FullBatchFailure extends RuntimeError {
  override readonly name = 'FullBatchFailure';
  constructor(
    readonly records: number,
    readonly errors: readonly unknown[],
    options?: ErrorOptions,
  ) {
    super(`all ${records} record(s) of the batch failed processing; ${errors.length} of them threw (each logged on its own)`, options);
  }
}

/**
 * Errors of AWS services that a handler lets escape once the SDK's own retries are spent: a
 * throttled or briefly overloaded dependency. Another attempt a few seconds later usually passes,
 * so the Step Functions tasks retry them.
 */
export const AWS_THROTTLING_ERRORS = ['ThrottlingException', 'ProvisionedThroughputExceededException', 'RequestLimitExceeded'] as const;
