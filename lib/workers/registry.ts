import type { z } from 'zod';
import type { SourceLabel } from '../contract';
import type { WorkerCatalog, WorkerKindInfo } from '../domain/catalog';
import type { DefinedWorker } from './define';
import { MergeConflict, UnknownWorkerKind, WorkerDefinitionError } from './errors';
import type { Synthesizer } from './synthesizer';

/**
 * One `ok` outcome's findings, tagged with the kind that produced them.
 *
 * @example
 * registry.merge(outcomes.filter((o) => o.state === 'ok').map((o) => ({ worker: kindOf(o), findings: o.findings })));
 */
export interface MergeItem {
  readonly worker: string;
  readonly findings: unknown;
}

/**
 * The answer's `result` and a sentence for its `text`, built from the merged findings.
 *
 * @example
 * const { result, text } = registry.merge(items); // { totalDeductiblePence: 113747, … }, 'Deductible total: £1,137.47 …'
 */
export interface MergedAnswer {
  readonly result: Record<string, unknown>;
  readonly text: string;
}

/**
 * The worker kinds of a deployment.
 *
 * @example
 * const registry = createRegistry([taxStatements, transactionFeed]);
 * planRun(request, registry.catalog(), { maxDeadlineSeconds: 900 });
 */
export interface WorkerRegistry {
  /** Throws `UnknownWorkerKind`. */
  get(kind: string): DefinedWorker;
  find(kind: string): DefinedWorker | undefined;
  kinds(): readonly string[];
  /** What the planner and reports need (lib/domain/catalog.ts). */
  catalog(): WorkerCatalog;
  /** `SourceLabel` per kind, for the manifest's `sources`. */
  sources(): Record<string, SourceLabel>;
  /**
   * Folds `ok` findings into the answer. Findings are grouped by their output schema (a source
   * and its alternate share one, so a re-check's data joins the primary's total), each group is
   * merged by its kinds' shared `merge`, and the groups' results are combined key by key.
   */
  merge(items: readonly MergeItem[]): MergedAnswer;
  /** The synthesizer of a kind's findings: its output schema's own, else the registry's; none when neither declares one. */
  synthesizerFor(kind: string): Synthesizer | undefined;
}

/**
 * Options of a registry.
 *
 * @example
 * createRegistry(kinds, { synthesizer: defineSynthesizer({ offlineScript: faithfulSynthesis }) });
 */
export interface RegistryOptions {
  /** The deployment's model synthesizer (docs/workers.md, "Synthesis"); an output schema may declare its own. */
  readonly synthesizer?: Synthesizer;
}

const info = (kind: DefinedWorker): WorkerKindInfo => ({
  kind: kind.kind,
  dimension: kind.dimension,
  label: kind.label,
  recordNoun: kind.recordNoun,
  ...(kind.alternateSource === undefined ? {} : { alternateSource: kind.alternateSource }),
  ...(kind.typicalSeconds === undefined ? {} : { typicalSeconds: kind.typicalSeconds }),
  ...(kind.recheckInput === undefined ? {} : { recheckInput: kind.recheckInput }),
  validateInput: (input) => {
    const parsed = kind.parseInput(input);
    return parsed.ok ? [] : parsed.issues;
  },
});

const checkAlternate = (kind: DefinedWorker, byName: ReadonlyMap<string, DefinedWorker>): void => {
  if (kind.alternateSource === undefined) return;
  const alternate = byName.get(kind.alternateSource);
  const problem = (text: string) => new WorkerDefinitionError(kind.kind, text);
  if (!alternate) throw problem(`alternate source "${kind.alternateSource}" is not registered`);
  if (alternate.dimension !== kind.dimension) throw problem(`alternate source "${alternate.kind}" works in another dimension`);
  if (alternate.output !== kind.output) {
    throw problem(`alternate source "${alternate.kind}" must use the same output schema, so a re-check's findings merge with this kind's`);
  }
  // A re-check is dispatched with the input of the subtask whose gap it re-checks: the alternate
  // must take that input as it is (the same schema), or this kind must say how to map it.
  if (kind.recheckInput === undefined && alternate.input !== kind.input) {
    throw problem(
      `alternate source "${alternate.kind}" has another input schema than "${kind.kind}", so it cannot take the input of a re-check of ` +
        `"${kind.kind}"'s gaps: give both kinds the same input schema, or declare recheckInput on "${kind.kind}" to map its input to "${alternate.kind}"'s`,
    );
  }
};

/** Kinds sharing an output schema are merged together, so they must agree on how. */
const checkSharedMerge = (kinds: readonly DefinedWorker[]): void => {
  const first = new Map<z.ZodType, DefinedWorker>();
  for (const kind of kinds) {
    const other = first.get(kind.output);
    if (!other) {
      first.set(kind.output, kind);
    } else if ((['merge', 'summarize', 'items', 'claims', 'synthesizer'] as const).some((part) => other.declared[part] !== kind.declared[part])) {
      throw new WorkerDefinitionError(
        kind.kind,
        `shares its output schema with "${other.kind}" and must share its merge, summarize, items, claims and synthesizer too`,
      );
    }
  }
};

const combine = (groups: readonly { kind: string; result: Record<string, unknown> }[]): Record<string, unknown> => {
  const result: Record<string, unknown> = {};
  const owner = new Map<string, string>();
  for (const group of groups) {
    for (const [key, value] of Object.entries(group.result)) {
      const previous = owner.get(key);
      if (previous !== undefined) throw new MergeConflict(key, [previous, group.kind]);
      owner.set(key, group.kind);
      result[key] = value;
    }
  }
  return result;
};

/**
 * Creates a registry, checking the kinds against each other: unique names, alternate sources
 * that exist in the same dimension with the same findings and take the primary's input (the
 * same input schema, or the primary's `recheckInput` maps it), shared merges.
 *
 * @example
 * const registry = createRegistry([cateringQuote]);
 * registry.catalog().get('catering-quote')?.validateInput({ sku: 'SKU-VANILLA', guests: 0 })
 * // [{ path: 'guests', message: 'Too small: expected number to be >=1' }]
 */
export const createRegistry = (kinds: readonly DefinedWorker[], options: RegistryOptions = {}): WorkerRegistry => {
  const byName = new Map<string, DefinedWorker>();
  for (const kind of kinds) {
    if (byName.has(kind.kind)) throw new WorkerDefinitionError(kind.kind, 'is registered twice');
    byName.set(kind.kind, kind);
  }
  for (const kind of kinds) checkAlternate(kind, byName);
  checkSharedMerge(kinds);
  const names = Object.freeze([...byName.keys()]);
  const get = (name: string): DefinedWorker => {
    const kind = byName.get(name);
    if (!kind) throw new UnknownWorkerKind(name, names);
    return kind;
  };
  const catalog: WorkerCatalog = Object.freeze({
    get: (name: string) => {
      const kind = byName.get(name);
      return kind === undefined ? undefined : info(kind);
    },
    kinds: () => names,
  });

  return Object.freeze({
    get,
    find: (name: string) => byName.get(name),
    kinds: () => names,
    catalog: () => catalog,
    sources: () => Object.fromEntries(kinds.map((kind) => [kind.kind, kind.sourceLabel()])),
    merge: (items: readonly MergeItem[]) => {
      const groups = new Map<z.ZodType, { kind: DefinedWorker; findings: unknown[] }>();
      // Registry order, not arrival order, picks each group's merge and orders the text.
      for (const kind of kinds) if (!groups.has(kind.output)) groups.set(kind.output, { kind, findings: [] });
      for (const item of items) groups.get(get(item.worker).output)?.findings.push(item.findings);
      const merged = [...groups.values()]
        .filter((group) => group.findings.length > 0)
        .map(({ kind, findings }) => ({ kind: kind.kind, result: kind.merge(findings), summarize: kind.summarize }));
      const text = merged.flatMap(({ result, summarize }) => (summarize ? [summarize(result)] : [])).join(' ');
      return { result: combine(merged), text };
    },
    synthesizerFor: (kind: string) => get(kind).synthesizer ?? options.synthesizer,
  });
};
