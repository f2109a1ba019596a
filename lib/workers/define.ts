import { z } from 'zod';
import { SourceLabel, WorkerKind as WorkerKindName, type Dimension, type Scope } from '../contract';
import type { Assignment } from './assignment';
import { WorkerDefinitionError } from './errors';
import type { WorkerModel } from './model';
import type { OfflineScript } from './models/offline';
import type { DataSource, ToolBinding } from './sources';
import type { FindingClaim, FindingPart } from '../domain';
import type { Synthesizer } from './synthesizer';

/**
 * The data sources of a kind, keyed by the name of the tool each becomes.
 *
 * @example
 * const sources = { statements: statementsSource } satisfies SourcesOf<'time'>;
 */
export type SourcesOf<D extends Dimension> = Readonly<Record<string, DataSource<D, unknown>>>;

/**
 * The tools a worker receives for its declared sources.
 *
 * @example
 * type Tools = ToolsOf<{ statements: typeof statementsSource }>; // { statements: TimeSeriesTool<StatementTransaction> }
 */
export type ToolsOf<S> = { readonly [K in keyof S]: S[K] extends DataSource<Dimension, infer Tool> ? Tool : never };

/**
 * What `run` receives. There is no way to write an observed block from here: coverage is what
 * the tools returned.
 *
 * @example
 * run: async (ctx) => {
 *   const rows = await ctx.tools.statements();          // recorded by the tool layer
 *   if (ctx.remainingMs() < 1_000) throw ctx.signal.reason;
 *   return summarise(rows);
 * }
 */
export interface WorkerContext<D extends Dimension, Input, Tools, Output = unknown> {
  /** Deeply frozen: scope, input, deadline and allowance, the same for every generation. */
  readonly assignment: Assignment<D, Input>;
  /** Scoped tools built from the kind's sources. */
  readonly tools: Tools;
  /** The model, each call reserved against the durable allowance first. */
  readonly model: WorkerModel;
  /** Fires at the absolute deadline, on cancellation, or when the SDK must stop the worker. */
  readonly signal: AbortSignal;
  /** Milliseconds left before the deadline. */
  remainingMs(): number;
  /**
   * Reports findings over every record the tools have returned so far, in this kind's `output`
   * schema, for a kind that declares `partialFindings: true` (otherwise it throws
   * `WorkerDefinitionError`). The SDK stores them in the next checkpoint together with the
   * coverage observed at this call, so a deadline that cuts the worker off keeps them: the
   * retry is sent only the unread rest (docs/workers.md, "Checkpoints and partial findings").
   * Call it when the findings account for everything read, and only then.
   */
  checkpoint(findings: Output): void;
  /**
   * On a redelivery after a crash: what an earlier generation's last checkpoint had covered,
   * with its partial findings, for a kind that declares `partialFindings`. A kind may skip that
   * region and start its findings from these; the SDK still refuses reads outside the assignment.
   */
  readonly resumeFrom?: Readonly<{ covered: readonly Scope[]; findings: Output }>;
}

/** Tool names double as model tool names, so they follow Bedrock's rule. */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * A worker kind as a product team writes it. `input` and `output` are zod schemas; everything
 * else is typed from them.
 *
 * @example
 * defineWorker({ kind, dimension: 'time', label, recordNoun, input, output, sources, merge, run } satisfies WorkerDefinition<…>);
 */
export interface WorkerDefinition<D extends Dimension, I extends z.ZodType, O extends z.ZodType, S extends SourcesOf<D>, R extends Record<string, unknown>> {
  /** `tax-statements`: lower-case letters, digits and `-`. */
  readonly kind: string;
  readonly dimension: D;
  /** How reports name the source: `monthly statements`. */
  readonly label: string;
  /** How reports name its records: `transactions`. */
  readonly recordNoun: string;
  /**
   * The kind that re-checks this kind's observed gaps against another source; it must share this
   * kind's `output` schema, and take this kind's `input` (the same schema) unless `recheckInput`
   * maps it. Without one, a gap is re-read by this kind itself, which can find data but never
   * confirm the gap empty.
   */
  readonly alternateSource?: string;
  /**
   * Maps this kind's `input` to the `alternateSource`'s, for a re-check of a gap this kind left
   * (the re-check is otherwise dispatched with this kind's input as it is). Needed when the two
   * kinds' input schemas differ; the alternate validates the result with its own schema.
   */
  readonly recheckInput?: (input: z.output<I>) => Record<string, unknown>;
  /**
   * How long one subtask of this kind typically runs, in seconds. With it the planner warns
   * (`capacity_short`) when the kind's capacity cannot finish a plan's subtasks by their deadlines.
   */
  readonly typicalSeconds?: number;
  /** Schema of the subtask's `input` (the inquiry). Use `z.strictObject({})` when there is none. */
  readonly input: I;
  /** Schema of the findings `run` returns. Output that fails it makes the outcome `invalid`. */
  readonly output: O;
  readonly sources: S;
  readonly run: (ctx: WorkerContext<D, z.output<I>, ToolsOf<S>, z.input<O>>) => Promise<z.input<O>>;
  /**
   * The kind reports partial findings with `ctx.checkpoint(findings)` while it reads. Reconcile
   * then counts what they rest on as read when the deadline cuts the worker off. Without it,
   * checkpoints hold only the observation, and a timed-out subtask is read again in full.
   */
  readonly partialFindings?: boolean;
  /**
   * Folds the findings of the `ok` outcomes into the answer's `result`. Kinds that share an
   * `output` schema (a source and its alternate) must share this function too.
   */
  readonly merge: (findings: readonly z.output<O>[]) => R;
  /** One sentence for `answer.text` from the merged result. */
  readonly summarize?: (result: R) => string;
  /**
   * A deterministic function that computes the same findings without a model (the catering example). The
   * outcome then records whether the worker matched it and the model calls of each path.
   */
  readonly baseline?: (input: z.output<I>) => z.input<O> | Promise<z.input<O>>;
  /** Scripted answers of the offline model for the `task`s this kind's model calls name. */
  readonly offlineScripts?: Readonly<Record<string, OfflineScript>>;
  /**
   * Splits one outcome's findings into the findings synthesis cites, each with its evidence ids
   * (`A#1`, `A#2`, … in this order). Without it, an `ok` outcome is one finding with no evidence.
   * Kinds that share an `output` schema must share it.
   */
  readonly items?: (findings: z.output<O>) => readonly FindingItem[];
  /**
   * What one finding (an item) claims, as key and value: two `ok` findings with the same key and
   * different values are a conflict, listed in the coverage and checked by the synthesis audit.
   */
  readonly claims?: (item: FindingItem) => readonly FindingClaim[];
  /** The model synthesizer of this output schema, when it has its own (else the registry's). */
  readonly synthesizer?: Synthesizer;
}

/**
 * One finding of an outcome, as a kind's `items` splits it.
 *
 * @example
 * const item: FindingItem = { statement: 'Pro is $59 a seat', evidence: ['price-2025-05'], content: finding };
 */
export interface FindingItem {
  readonly statement?: string;
  readonly evidence?: readonly string[];
  readonly content: unknown;
}

/**
 * What the SDK needs from one run of a kind: the pieces the generic types were closed over.
 *
 * @example
 * await kind.execute({ assignment, model, signal, remainingMs, binding: (tool) => bindingFor(run, tool) });
 */
export interface WorkerRunParts<D extends Dimension> {
  readonly assignment: Assignment<D, unknown>;
  readonly model: WorkerModel;
  readonly signal: AbortSignal;
  remainingMs(): number;
  /** Builds the binding of one tool; the SDK supplies scope, recorder, refusals and signal. */
  binding(tool: string): ToolBinding<D>;
  /** Stores partial findings (already validated) in the next checkpoint. */
  checkpoint(findings: unknown): void;
  /** An earlier generation's partial checkpoint, when this run resumes one. */
  readonly resumeFrom?: Readonly<{ covered: readonly Scope[]; findings: unknown }> | undefined;
}

/**
 * A defined worker kind with its generics erased, so a registry can hold many. Values cross
 * this interface as `unknown` and are validated by the kind's own schemas on the way in.
 *
 * @example
 * const kind: DefinedWorker = defineWorker({ … });
 * kind.parseInput({ sku: 'SKU-VANILLA', guests: 0 }) // { ok: false, issues: [{ path: 'guests', … }] }
 */
export interface DefinedWorker {
  readonly kind: string;
  readonly dimension: Dimension;
  readonly label: string;
  readonly recordNoun: string;
  readonly alternateSource?: string;
  /** Typical seconds one subtask runs, when the kind declares it. */
  readonly typicalSeconds?: number;
  /** The schema of the kind's `input`; a re-check's input must fit its alternate's (`createRegistry`). */
  readonly input: z.ZodType;
  /**
   * The kind's `recheckInput`, taking an input as dispatched: it is parsed with this kind's schema
   * first, then mapped to the alternate source's input.
   */
  readonly recheckInput?: (input: unknown) => Record<string, unknown>;
  /** Identity of the findings shape; kinds with the same one are merged together. */
  readonly output: z.ZodType;
  readonly merge: (findings: readonly unknown[]) => Record<string, unknown>;
  readonly summarize?: (result: Record<string, unknown>) => string;
  /** The `merge`, `summarize`, `items`, `claims` and synthesizer as declared, compared by identity across kinds. */
  readonly declared: { readonly merge: unknown; readonly summarize: unknown; readonly items: unknown; readonly claims: unknown; readonly synthesizer: unknown };
  /** One `ok` outcome's findings as the findings synthesis cites, in order, with what each claims. */
  findingParts(findings: unknown): FindingPart[];
  /** The kind's own synthesizer, if it declares one. */
  readonly synthesizer?: Synthesizer;
  readonly offlineScripts: Readonly<Record<string, OfflineScript>>;
  readonly hasBaseline: boolean;
  /** The kind reports partial findings (`ctx.checkpoint`). */
  readonly partialFindings: boolean;
  parseInput(input: unknown): { ok: true; input: unknown } | { ok: false; issues: { path: string; message: string }[] };
  /** Runs the kind's `run` with tools bound to `parts`; resolves with its raw, unvalidated output. */
  execute(parts: WorkerRunParts<Dimension>): Promise<unknown>;
  /** The baseline's findings for a validated input, or `undefined` when the kind has none. */
  baseline(input: unknown): Promise<unknown>;
  /** The label reports use (`SourceLabel` of the manifest). */
  sourceLabel(): SourceLabel;
}

/** The parts of a definition that can be checked without its generics. */
interface DeclaredShape {
  readonly kind: string;
  readonly dimension: Dimension;
  readonly label: string;
  readonly recordNoun: string;
  readonly alternateSource?: string;
  readonly typicalSeconds?: number;
  readonly recheckInput?: unknown;
  readonly sources: Readonly<Record<string, { readonly dimension: Dimension }>>;
}

const checkDefinition = (definition: DeclaredShape): void => {
  const problem = (text: string) => new WorkerDefinitionError(definition.kind, text);
  if (!WorkerKindName.safeParse(definition.kind).success) throw problem('the kind must be lower-case letters, digits and "-", starting with a letter');
  if (!SourceLabel.safeParse({ label: definition.label, recordNoun: definition.recordNoun, alternateSource: definition.alternateSource }).success) {
    throw problem('label and recordNoun must be non-empty and alternateSource a valid kind name');
  }
  if (definition.alternateSource === definition.kind) throw problem('a kind cannot be its own alternate source');
  if (definition.recheckInput !== undefined && definition.alternateSource === undefined) {
    throw problem("recheckInput maps a re-check's input to the alternate source's: declare alternateSource too");
  }
  const typical = definition.typicalSeconds;
  if (typical !== undefined && !(Number.isFinite(typical) && typical > 0))
    throw problem(`typicalSeconds must be a positive number of seconds (got ${typical})`);
  for (const [tool, source] of Object.entries(definition.sources)) {
    if (!TOOL_NAME.test(tool)) throw problem(`tool name "${tool}" must be 1-64 letters, digits, "_" or "-"`);
    if (source.dimension !== definition.dimension) {
      throw problem(`source "${tool}" works in the ${source.dimension} dimension but the kind works in ${definition.dimension}`);
    }
  }
};

const issuePath = (path: readonly PropertyKey[]): string => path.map(String).join('.');

/** Builds the tools of one run from the declared sources. */
const bindTools = <D extends Dimension, S extends SourcesOf<D>>(sources: S, parts: WorkerRunParts<D>): ToolsOf<S> => {
  const tools: Record<string, unknown> = {};
  for (const [name, source] of Object.entries(sources)) tools[name] = source.bind(parts.binding(name));
  // Object.entries loses the key-to-tool correspondence that ToolsOf<S> states; the loop keeps it.
  return Object.freeze(tools) as ToolsOf<S>;
};

/**
 * Declares a worker kind.
 *
 * @example
 * export const cateringQuote = defineWorker({
 *   kind: 'catering-quote', dimension: 'ids', label: 'catalogue', recordNoun: 'quotes',
 *   input: CateringInquiry, output: CateringQuote,
 *   sources: { catering_quote: quoteSource },
 *   baseline: quote,
 *   merge: (quotes) => ({ quotes }),
 *   run: async (ctx) => (await ctx.tools.catering_quote(ctx.assignment.input))[0],
 * });
 */
export const defineWorker = <D extends Dimension, I extends z.ZodType, O extends z.ZodType, S extends SourcesOf<D>, R extends Record<string, unknown>>(
  definition: WorkerDefinition<D, I, O, S, R>,
): DefinedWorker => {
  checkDefinition(definition);
  const { summarize, baseline, recheckInput, items, claims, synthesizer } = definition;
  const findingParts = (findings: unknown): FindingPart[] => {
    const parsed = definition.output.parse(findings);
    const listed: readonly FindingItem[] = items ? items(parsed) : [{ content: parsed }];
    return listed.map((item) => ({
      ...(item.statement === undefined ? {} : { statement: item.statement }),
      evidence: [...(item.evidence ?? [])],
      content: item.content,
      claims: claims ? [...claims(item)] : [],
    }));
  };
  return Object.freeze({
    kind: definition.kind,
    dimension: definition.dimension,
    label: definition.label,
    recordNoun: definition.recordNoun,
    ...(definition.alternateSource === undefined ? {} : { alternateSource: definition.alternateSource }),
    ...(definition.typicalSeconds === undefined ? {} : { typicalSeconds: definition.typicalSeconds }),
    input: definition.input,
    ...(recheckInput === undefined ? {} : { recheckInput: (input: unknown) => recheckInput(definition.input.parse(input ?? {})) }),
    output: definition.output,
    merge: (findings: readonly unknown[]) => definition.merge(findings.map((item) => definition.output.parse(item))),
    ...(summarize === undefined ? {} : { summarize: (result: Record<string, unknown>) => summarize(result as R) }),
    declared: { merge: definition.merge, summarize, items, claims, synthesizer },
    findingParts,
    ...(synthesizer === undefined ? {} : { synthesizer }),
    offlineScripts: Object.freeze({ ...definition.offlineScripts }),
    hasBaseline: baseline !== undefined,
    partialFindings: definition.partialFindings === true,
    parseInput: (input: unknown) => {
      const parsed = definition.input.safeParse(input ?? {});
      return parsed.success
        ? { ok: true as const, input: parsed.data }
        : { ok: false as const, issues: parsed.error.issues.map((issue) => ({ path: issuePath(issue.path), message: issue.message })) };
    },
    execute: async (parts: WorkerRunParts<Dimension>) => {
      const typed = parts as WorkerRunParts<D>;
      return definition.run({
        assignment: typed.assignment as Assignment<D, z.output<I>>,
        tools: bindTools(definition.sources, typed),
        model: parts.model,
        signal: parts.signal,
        remainingMs: parts.remainingMs,
        checkpoint: (findings) => {
          if (definition.partialFindings !== true) {
            throw new WorkerDefinitionError(definition.kind, 'ctx.checkpoint needs partialFindings: true in the definition');
          }
          parts.checkpoint(definition.output.parse(findings));
        },
        ...(parts.resumeFrom === undefined ? {} : { resumeFrom: parts.resumeFrom as { covered: readonly Scope[]; findings: z.input<O> } }),
      });
    },
    baseline: async (input: unknown) => (baseline === undefined ? undefined : baseline(definition.input.parse(input))),
    sourceLabel: () => SourceLabel.parse({ label: definition.label, recordNoun: definition.recordNoun, alternateSource: definition.alternateSource }),
  });
};
