import type { Dimension } from '../contract';

/** A problem with a subtask's `input`, with a path relative to that input. */
export interface InputIssue {
  readonly path: string;
  readonly message: string;
}

/**
 * What planning and reporting need to know about one worker kind. The worker SDK builds these
 * from `defineWorker` declarations; the domain only reads them, so it stays free of worker code.
 */
export interface WorkerKindInfo {
  readonly kind: string;
  /** The scope dimension this kind works in. */
  readonly dimension: Dimension;
  /** How reports name the kind's source: `monthly statements`, `transaction feed`. */
  readonly label: string;
  /** How reports name its records: `transactions`, `notes`. */
  readonly recordNoun: string;
  /** The kind that re-checks this kind's observed gaps against another source. */
  readonly alternateSource?: string;
  /**
   * Maps an input of this kind to its `alternateSource`'s, for a re-check of a gap this kind left
   * ({@link withRecheckInputs}); absent when the two kinds take the same input.
   */
  recheckInput?(input: Readonly<Record<string, unknown>> | undefined): Record<string, unknown>;
  /** How long one subtask of this kind typically runs, in seconds, when the kind declares it. */
  readonly typicalSeconds?: number;
  /** Validates a subtask `input` against the kind's schema. An empty list means valid. */
  validateInput(input: unknown): readonly InputIssue[];
}

/**
 * The worker kinds a deployment knows.
 *
 * @example
 * const info = catalog.get('tax-statements');
 * if (!info) problems.push({ code: 'unknown_worker', ... });
 */
export interface WorkerCatalog {
  get(kind: string): WorkerKindInfo | undefined;
  kinds(): readonly string[];
  /**
   * The model ids a subtask may name in `model` (`offline`, a Bedrock model id the deployment
   * allows). Planning refuses any other. A catalog without it leaves `model` to the workers;
   * the API's catalog always has it ({@link withModels}).
   */
  models?(): readonly string[];
}

/**
 * The same catalog, allowing exactly `models` in a subtask's `model`.
 *
 * @example
 * const catalog = withModels(registry.catalog(), ['offline', 'offline:broaden']);
 * catalog.models?.() // ['offline', 'offline:broaden']
 */
export const withModels = (catalog: WorkerCatalog, models: readonly string[]): WorkerCatalog => {
  const allowed = Object.freeze([...models]);
  return Object.freeze({ get: (kind: string) => catalog.get(kind), kinds: () => catalog.kinds(), models: () => allowed });
};
