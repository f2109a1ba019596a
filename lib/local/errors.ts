/** Errors of the local cloud. Each says what to do, in one line, because people read them in a terminal. */

/** Base of the local cloud's errors; the CLI prints any of them as its one line. */
export class LocalCloudError extends Error {
  override readonly name: string = 'LocalCloudError';
}

/** Java 17+ is needed for DynamoDB Local and was not found. */
export class JavaMissingError extends LocalCloudError {
  override readonly name = 'JavaMissingError';
  constructor(
    readonly found: string | undefined,
    options?: ErrorOptions,
  ) {
    super(
      found === undefined
        ? 'tessera: DynamoDB Local needs Java 17 or newer, and `java` was not found on PATH. Install it (Debian/Ubuntu: `sudo apt-get install -y openjdk-17-jre-headless`; macOS: `brew install openjdk@17`) and try again.'
        : `tessera: DynamoDB Local needs Java 17 or newer, but \`java -version\` reports ${found}. Install Java 17+ (Debian/Ubuntu: \`sudo apt-get install -y openjdk-17-jre-headless\`) and put it first on PATH.`,
      options,
    );
  }
}

/** A local emulator did not become ready in time. */
export class EmulatorStartError extends LocalCloudError {
  override readonly name = 'EmulatorStartError';
}

// ---------------------------------------------------------------- the emulation harness

/**
 * A template value the harness cannot turn into a local value: an unsupported intrinsic, a
 * reference to a resource it does not emulate, a missing parameter. It never guesses.
 *
 * @example
 * throw new TemplateResolutionError('Resources.Fn.Properties.Environment.Variables.X', 'Fn::ImportValue is not supported');
 */
export class TemplateResolutionError extends LocalCloudError {
  override readonly name = 'TemplateResolutionError';
  constructor(
    /** Where in the template: `Resources.<LogicalId>.Properties.<...>`. */
    readonly path: string,
    readonly detail: string,
    options?: ErrorOptions,
  ) {
    super(`tessera local cloud: cannot resolve ${path}: ${detail}`, options);
  }
}

/**
 * The template uses a feature the local cloud does not emulate. Raised at start-up, so a run
 * never silently behaves differently from AWS.
 *
 * @example
 * throw new UnsupportedFeatureError('Resources.Api', 'AuthorizationType AWS_IAM');
 */
export class UnsupportedFeatureError extends LocalCloudError {
  override readonly name = 'UnsupportedFeatureError';
  constructor(
    readonly path: string,
    readonly feature: string,
    options?: ErrorOptions,
  ) {
    super(`tessera local cloud: ${path} uses ${feature}, which the local cloud does not emulate`, options);
  }
}

/**
 * A function's handler module could not be loaded or built from its environment.
 *
 * @example
 * throw new HandlerLoadError('Dispatch', 'functions/dispatch.ts', 'it does not export createHandler');
 */
export class HandlerLoadError extends LocalCloudError {
  override readonly name = 'HandlerLoadError';
  constructor(
    readonly functionName: string,
    readonly entry: string | undefined,
    readonly detail: string,
    options?: ErrorOptions,
  ) {
    super(`tessera local cloud: function ${functionName}${entry ? ` (${entry})` : ''}: ${detail}`, options);
  }
}

/**
 * Creating a table or a queue in an emulator failed, or its definition cannot work locally.
 *
 * @example
 * throw new ProvisioningError('Ledger', 'CreateTable failed', { cause: error });
 */
export class ProvisioningError extends LocalCloudError {
  override readonly name = 'ProvisioningError';
  constructor(
    readonly logicalId: string,
    readonly detail: string,
    options?: ErrorOptions,
  ) {
    super(`tessera local cloud: cannot provision ${logicalId}: ${detail}`, options);
  }
}

/**
 * The process environment would send an emulated call to somewhere other than the local cloud
 * (for example `AWS_ENDPOINT_URL_LAMBDA` unset, so a state machine would invoke real AWS Lambda).
 *
 * @example
 * throw new EndpointMisconfiguredError('AWS_ENDPOINT_URL_LAMBDA', 'http://127.0.0.1:4001', undefined);
 */
export class EndpointMisconfiguredError extends LocalCloudError {
  override readonly name = 'EndpointMisconfiguredError';
  constructor(
    readonly variable: string,
    readonly expected: string,
    readonly actual: string | undefined,
    options?: ErrorOptions,
  ) {
    super(`tessera local cloud: ${variable} must be ${expected} so calls stay local, but it is ${actual ?? 'unset'}`, options);
  }
}

/**
 * A Step Functions API error, with the AWS error code (`ExecutionAlreadyExists`,
 * `TaskTimedOut`, …) that the local endpoint returns as `__type`.
 *
 * @example
 * throw new StatesApiError('TaskDoesNotExist', 'Task does not exist anymore');
 */
export class StatesApiError extends LocalCloudError {
  override readonly name = 'StatesApiError';
  constructor(
    readonly code: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * The error a Task fails with when its callback reports failure (SendTaskFailure) or its Lambda
 * fails. Step Functions matches Retry and Catch on the error *name*, so `name` is the reported
 * error code (`Lambda.ResourceNotFoundException`, a worker's own error type, …) and the message is
 * the cause.
 *
 * It extends `Error`, not {@link LocalCloudError}: its name is the reported error's, so it belongs
 * to whichever service or worker reported it, not to the local cloud.
 *
 * @example
 * throw new TaskFailure('WorkerCrashed', '{"errorMessage":"boom"}');
 */
export class TaskFailure extends Error {
  override readonly name: string;
  constructor(
    readonly error: string,
    readonly causeText: string,
    options?: ErrorOptions,
  ) {
    super(causeText, options);
    this.name = error;
  }
}

// ---------------------------------------------------------------- the project's CDK app

/**
 * The project's CDK app (the `app` of its cdk.json) could not give the local cloud its fan-out:
 * it failed to synthesize, its cloud assembly could not be read, a `TesseraFanOut`'s metadata is
 * malformed (the field is named), or several fan-outs are there and none, or a wrong one, was
 * chosen with `--construct` (the candidates are named).
 *
 * @example
 * throw new ProjectAppError('cdk.json', 'the app has 2 TesseraFanOut constructs: pass --construct with one of A/FanOut, B/FanOut');
 */
export class ProjectAppError extends LocalCloudError {
  override readonly name = 'ProjectAppError';
  constructor(
    /** The cdk.json whose app it is. */
    readonly cdkJson: string,
    readonly detail: string,
    options?: ErrorOptions,
  ) {
    super(`tessera: the CDK app of ${cdkJson}: ${detail}`, options);
  }
}
