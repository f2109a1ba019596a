/**
 * Errors of the CDK constructs. They are thrown at synth time, so each names the construct
 * path and every problem at once: a deployer fixes their props in one pass, not one per synth.
 */

/**
 * Base of the infra errors; catch it to handle any of them.
 *
 * @example
 * try { new TesseraFanOut(stack, 'FanOut', props); } catch (e) { if (e instanceof InfraError) console.error(e.message); }
 */
export class InfraError extends Error {
  override readonly name: string = 'InfraError';
}

/**
 * The props given to a tessera construct cannot describe a working deployment
 * (settings for a kind the worker module does not register, an event-source concurrency below the Lambda minimum, …).
 *
 * @example
 * new InvalidConstructProps('Stack/FanOut', ['kinds.nope: names no worker kind of src/workers.ts (its kinds: invoice-lines)'])
 */
export class InvalidConstructProps extends InfraError {
  override readonly name = 'InvalidConstructProps';
  constructor(
    readonly constructPath: string,
    readonly problems: readonly string[],
    options?: ErrorOptions,
  ) {
    super(`invalid props for ${constructPath}: ${problems.join('; ')}`, options);
  }
}

/**
 * A synthesized state machine definition could not be rendered to Amazon States Language:
 * an intrinsic it cannot resolve, or JSON that is not a state machine.
 *
 * @example
 * throw new DefinitionNotRenderable('DefinitionString is not a string or Fn::Join');
 */
export class DefinitionNotRenderable extends InfraError {
  override readonly name = 'DefinitionNotRenderable';
  constructor(
    readonly detail: string,
    options?: ErrorOptions,
  ) {
    super(`cannot render the state machine definition: ${detail}`, options);
  }
}
