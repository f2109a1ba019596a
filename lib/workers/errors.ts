/**
 * Errors of the worker SDK and its model adapters. A worker kind's own errors live beside that
 * kind and extend {@link WorkerError} (the reference kinds' do, in examples/app).
 *
 * Three families, because callers treat them differently:
 * - stop reasons (`DeadlineExceeded`, `SubtaskCancelled`): why `ctx.signal` fired; the SDK turns
 *   them into `timed_out` / `cancelled` outcomes;
 * - refusals and worker-level failures (`ScopeViolation`, `EstimateMismatch`, `ModelCallFailed`…):
 *   a worker may catch them; if one escapes `run`, the outcome is `invalid` naming the error;
 * - programming and deployment errors (`InvalidAssignment`, `UnknownWorkerKind`,
 *   `WorkerDefinitionError`, `ModelConfigError`…): thrown to the caller, never hidden in an outcome.
 *
 * @example
 * if (error instanceof WorkerError) logger.warn(error.name);
 */

/** Base of the worker SDK's errors, and of a worker kind's own; catch it to handle any of them. */
export class WorkerError extends Error {
  override readonly name: string = 'WorkerError';
}

/**
 * The absolute deadline of the subtask passed. The reason `ctx.signal` carries when it fires then.
 *
 * @example
 * ctx.signal.reason instanceof DeadlineExceeded // true once the deadline has passed
 */
export class DeadlineExceeded extends WorkerError {
  override readonly name = 'DeadlineExceeded';
  constructor(
    readonly deadline: string,
    options?: ErrorOptions,
  ) {
    super(`the subtask's deadline ${deadline} passed`, options);
  }
}

/**
 * Someone outside the worker cancelled the subtask (the run was cancelled).
 *
 * @example
 * ctx.signal.reason instanceof SubtaskCancelled // true after the run was cancelled
 */
export class SubtaskCancelled extends WorkerError {
  override readonly name = 'SubtaskCancelled';
  constructor(options?: ErrorOptions) {
    super('the subtask was cancelled', options);
  }
}

/**
 * The subtask handed over to its `subdivide` hedge pieces (docs/hedging.md, "Handover"): its
 * stored checkpoint is the prefix, the pieces read the rest. The SDK aborts `ctx.signal` with it
 * and ends the run with no outcome of its own (`runSubtask` throws it; the delivery is done).
 *
 * @example
 * ctx.signal.reason instanceof SubtaskHandedOver // true once the ledger said the subtask handed over
 */
export class SubtaskHandedOver extends WorkerError {
  override readonly name = 'SubtaskHandedOver';
  constructor(
    readonly subtaskId: string,
    options?: ErrorOptions,
  ) {
    super(`subtask ${subtaskId} handed over to its hedge pieces: they read the rest of its scope`, options);
  }
}

/**
 * A scoped tool refused a request outside the assignment: a date range beyond the assigned
 * one, an id that was not assigned, another SKU or guest count than the inquiry. The refusal is
 * also recorded in the outcome's `refusals`, whether or not the worker catches this error.
 *
 * @example
 * try { await ctx.tools.statements({ from: '2025-03-01', toExclusive: '2025-07-01' }); }
 * catch (error) { if (!(error instanceof ScopeViolation)) throw error; } // already in outcome.refusals
 */
export class ScopeViolation extends WorkerError {
  override readonly name = 'ScopeViolation';
  constructor(
    readonly tool: string,
    /** What was asked for, summarised (never a payload). */
    readonly requested: string,
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(`${tool} refused ${requested}: ${reason}`, options);
  }
}

/**
 * A model call declared a cost estimate other than the one fixed in the assignment.
 *
 * @example
 * await ctx.model.call({ messages, estimatedCost: 3 }); // EstimateMismatch when the assignment fixes 7
 */
export class EstimateMismatch extends WorkerError {
  override readonly name = 'EstimateMismatch';
  constructor(
    readonly expected: number,
    readonly requested: number,
    options?: ErrorOptions,
  ) {
    super(`a model call must be estimated at ${expected} as the assignment fixes, not ${requested}`, options);
  }
}

/**
 * A data source returned a record the tool layer cannot observe (its date does not parse, …).
 *
 * @example
 * new SourceDataError('statements', 'stmt-2025-06', 'postedDate "2025-06-31" is not an ISO date or instant')
 */
export class SourceDataError extends WorkerError {
  override readonly name = 'SourceDataError';
  constructor(
    readonly tool: string,
    readonly source: string,
    readonly detail: string,
    options?: ErrorOptions,
  ) {
    super(`${tool}: source ${source} returned an unusable record: ${detail}`, options);
  }
}

/**
 * A data source could not be reached. The tool records nothing for it.
 *
 * @example
 * if (!account) throw new SourceUnavailable('crm:vantage'); // the tool records nothing for it
 */
export class SourceUnavailable extends WorkerError {
  override readonly name = 'SourceUnavailable';
  constructor(
    readonly source: string,
    options?: ErrorOptions,
  ) {
    super(`source ${source} is not available`, options);
  }
}

/**
 * A failure worth another delivery: a source throttled or briefly unavailable. Unlike other
 * errors a worker throws, it is not turned into an `invalid` outcome: `runSubtask` rethrows it,
 * the worker Lambda reports the message as failed, SQS delivers it again, and after the queue's
 * `maxReceiveCount` it is dead-lettered and the subtask is sealed at its deadline with that reason.
 *
 * @example
 * if (response.status === 503) throw new TransientFailure('crm:vantage', 'search answered 503');
 */
export class TransientFailure extends WorkerError {
  override readonly name = 'TransientFailure';
  constructor(
    readonly source: string,
    readonly detail: string,
    options?: ErrorOptions,
  ) {
    super(`${source}: ${detail}; worth another delivery`, options);
  }
}

/**
 * The model adapter failed to answer (throttled, denied, network…). The reservation stays charged.
 *
 * @example
 * if (error instanceof ModelCallFailed && error.errorName === 'ThrottlingException') retryLater(); // the call stays charged
 */
export class ModelCallFailed extends WorkerError {
  override readonly name = 'ModelCallFailed';
  constructor(
    readonly adapter: string,
    readonly model: string,
    /** The provider's error name, such as `ThrottlingException`. */
    readonly errorName: string,
    options?: ErrorOptions,
  ) {
    super(`${adapter} model ${model} failed: ${errorName}`, options);
  }
}

/**
 * The model answered with something the adapter cannot read as a reply.
 *
 * @example
 * new ModelReplyInvalid('bedrock', ['output.message.content: Invalid input: expected array'])
 */
export class ModelReplyInvalid extends WorkerError {
  override readonly name = 'ModelReplyInvalid';
  constructor(
    readonly adapter: string,
    readonly issues: readonly string[],
    options?: ErrorOptions,
  ) {
    super(`${adapter} reply could not be read: ${issues.slice(0, 3).join('; ')}`, options);
  }
}

/**
 * The offline model has no script for a request (a free-text question it cannot answer).
 *
 * @example
 * await createOfflineModel().converse({ messages: [userText('write a poem')] }); // OfflineScriptMissing
 */
export class OfflineScriptMissing extends WorkerError {
  override readonly name = 'OfflineScriptMissing';
  constructor(
    readonly task: string | undefined,
    options?: ErrorOptions,
  ) {
    super(
      task === undefined
        ? 'the offline model answers tool-use conversations and named tasks; this request offered no tools and named no task'
        : `the offline model has no script for task "${task}" and the request offered no tools`,
      options,
    );
  }
}

/**
 * A subtask asked for a model this deployment does not allow.
 *
 * @example
 * models.select({ model: 'meta.llama3-70b-instruct-v1:0' }); // ModelNotAllowed unless configured
 */
export class ModelNotAllowed extends WorkerError {
  override readonly name = 'ModelNotAllowed';
  constructor(
    readonly model: string,
    readonly allowed: readonly string[],
    options?: ErrorOptions,
  ) {
    super(`model "${model}" is not allowed here (allowed: ${allowed.join(', ') || 'none'})`, options);
  }
}

/**
 * The model configuration in the environment is missing or malformed.
 *
 * @example
 * parseModelConfig({ MODEL_PROVIDER: 'bedrock' }); // ModelConfigError: BEDROCK_MODEL_ID is required when MODEL_PROVIDER is bedrock
 */
export class ModelConfigError extends WorkerError {
  override readonly name = 'ModelConfigError';
  constructor(
    readonly problems: readonly string[],
    options?: ErrorOptions,
  ) {
    super(`model configuration: ${problems.join('; ')}`, options);
  }
}

/**
 * The subtask handed to `runSubtask` lacks what the SDK needs (a deadline, a budget). A bug upstream.
 *
 * @example
 * await runSubtask({ subtask: { ...subtask, deadline: undefined }, … }); // InvalidAssignment
 */
export class InvalidAssignment extends WorkerError {
  override readonly name = 'InvalidAssignment';
  constructor(
    readonly subtaskId: string | undefined,
    readonly issues: readonly string[],
    options?: ErrorOptions,
  ) {
    super(`subtask ${subtaskId ?? '(unknown)'} cannot be run: ${issues.slice(0, 5).join('; ')}`, options);
  }
}

/**
 * No worker kind of that name is registered.
 *
 * @example
 * registry.get('tax-statment'); // UnknownWorkerKind, listing the known kinds
 */
export class UnknownWorkerKind extends WorkerError {
  override readonly name = 'UnknownWorkerKind';
  constructor(
    readonly kind: string,
    readonly known: readonly string[],
    options?: ErrorOptions,
  ) {
    super(`unknown worker kind "${kind}" (known: ${known.join(', ') || 'none'})`, options);
  }
}

/**
 * A worker kind or a registry is declared inconsistently. Raised when it is defined, not when it runs.
 *
 * @example
 * defineWorker({ kind: 'Tax', … }); // WorkerDefinitionError: the kind must be lower-case …
 */
export class WorkerDefinitionError extends WorkerError {
  override readonly name = 'WorkerDefinitionError';
  constructor(
    readonly kind: string,
    readonly problem: string,
    options?: ErrorOptions,
  ) {
    super(`worker kind "${kind}": ${problem}`, options);
  }
}

/**
 * Two groups of findings tried to write the same key of the answer's `result`.
 *
 * @example
 * registry.merge(items); // MergeConflict when two kinds of findings both write `total`
 */
export class MergeConflict extends WorkerError {
  override readonly name = 'MergeConflict';
  constructor(
    readonly key: string,
    readonly kinds: readonly string[],
    options?: ErrorOptions,
  ) {
    super(`result key "${key}" is produced by more than one kind of findings (${kinds.join(', ')})`, options);
  }
}

/**
 * The worker module a deployment, the CLI or the local cloud was pointed at cannot be used: it
 * does not exist, fails to load, or exports no registry.
 *
 * @example
 * throw new WorkerModuleError('src/workers.ts', 'exports no registry: export const registry = createRegistry([...])');
 */
export class WorkerModuleError extends WorkerError {
  override readonly name = 'WorkerModuleError';
  constructor(
    readonly path: string,
    readonly problem: string,
    options?: ErrorOptions,
  ) {
    super(`worker module ${path} ${problem}`, options);
  }
}
