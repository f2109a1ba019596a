import type { IdsScope, Scope } from '../contract';
import { DimensionMismatchError, SplitError } from './errors';
import { dimensionOf, evenCuts, type DescribeStyle, type ScopeAlgebra } from './scope';
import { listSome, numberWord } from './words';

/** A normalised set of ids: sorted by UTF-16 code units (the default string order), no repeats. */
export type IdSet = readonly string[];

const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Sorts and de-duplicates ids.
 *
 * @example
 * idSet(['t-3', 't-1', 't-3']) // ['t-1', 't-3']
 */
export const idSet = (ids: Iterable<string>): IdSet => {
  const sorted = [...ids].sort(byCodeUnit);
  return sorted.filter((id, i) => i === 0 || id !== sorted[i - 1]);
};

/** One merge walk over two sorted sets, keeping ids for which `keep(inA, inB)` holds. */
const mergeIds = (a: IdSet, b: IdSet, keep: (inA: boolean, inB: boolean) => boolean): IdSet => {
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const x = a[i];
    const y = b[j];
    const takeA = x !== undefined && (y === undefined || x <= y);
    const takeB = y !== undefined && (x === undefined || y <= x);
    if (keep(takeA, takeB)) out.push((takeA ? x : y) as string);
    if (takeA) i += 1;
    if (takeB) j += 1;
  }
  return out;
};

/** Whether the sorted set `set` holds `id`: a binary search. */
const holds = (set: IdSet, id: string): boolean => {
  let low = 0;
  let high = set.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((set[middle] as string) < id) low = middle + 1;
    else high = middle;
  }
  return set[low] === id;
};

/**
 * Whether a walk of the smaller set with a binary search in the larger costs less than one merge
 * walk over both: reconcile intersects each unread subtask's few ids with a universe of thousands,
 * once per subtask, and a merge walk there reads the whole universe each time.
 */
const searchSmaller = (small: IdSet, large: IdSet): boolean => small.length * Math.log2(large.length + 1) < small.length + large.length;

/** The ids of `a` that are also in `b` (`inB` true) or not (`inB` false), by binary search in `b`. */
const filterBySearch = (a: IdSet, b: IdSet, inB: boolean): IdSet => a.filter((id) => holds(b, id) === inB);

/** Positions of a universe's ids, with every repeated id and where it repeats. */
export interface IdIndex {
  /** Universe position of each distinct id (its first occurrence). */
  readonly position: ReadonlyMap<string, number>;
  /** Distinct ids in written order. */
  readonly ids: readonly string[];
  /** Each repeat: the id and its index in the written list. */
  readonly duplicates: ReadonlyArray<{ readonly id: string; readonly at: number }>;
}

/**
 * Indexes a written list of ids. A hash index rather than a sort: reconcile looks every
 * assigned and observed id up in it, and hashing keeps that linear for a million ids.
 *
 * @example
 * indexIds(['a', 'b', 'a']).duplicates // [{ id: 'a', at: 2 }]
 */
export const indexIds = (written: readonly string[]): IdIndex => {
  const position = new Map<string, number>();
  const ids: string[] = [];
  const duplicates: Array<{ id: string; at: number }> = [];
  for (let at = 0; at < written.length; at += 1) {
    const id = written[at] as string;
    // One hash operation per id: a set that does not grow the map found a repeat.
    position.set(id, ids.length);
    if (position.size > ids.length) ids.push(id);
    else duplicates.push({ id, at });
  }
  if (duplicates.length > 0) {
    // Repeats overwrote their first position; restore it (error path only).
    const repeated = new Set(duplicates.map((d) => d.id));
    ids.forEach((id, p) => repeated.has(id) && position.set(id, p));
  }
  return { position, ids, duplicates };
};

/**
 * Cuts a list into `parts` near-equal runs, keeping its order.
 *
 * @example
 * chunkEvenly(['a', 'b', 'c', 'd', 'e'], 2) // [['a', 'b'], ['c', 'd', 'e']]
 */
export const chunkEvenly = <T>(items: readonly T[], parts: number, field = 'parts'): T[][] => {
  if (parts > items.length) {
    throw new SplitError('plan_too_large', field, `cannot cut ${numberWord(items.length)} items into ${parts} non-empty parts`);
  }
  const cuts = evenCuts(items.length, parts);
  return cuts.slice(1).map((cut, i) => items.slice(cuts[i], cut));
};

/**
 * Cuts a list into runs of `size` (the last may be shorter), keeping its order.
 *
 * @example
 * chunkBySize(['a', 'b', 'c'], 2) // [['a', 'b'], ['c']]
 */
export const chunkBySize = <T>(items: readonly T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));

const asIdsScope = (scope: Scope): IdsScope => {
  if (!('ids' in scope)) throw new DimensionMismatchError('ids', dimensionOf(scope));
  return scope;
};

const describeIds = (set: IdSet, style: DescribeStyle): string => {
  if (set.length === 0) return 'no ids';
  if (style === 'exact') return set.length <= 10 ? set.join(', ') : `${set.slice(0, 10).join(', ')} (+${set.length - 10} more)`;
  return `${set.length === 1 ? 'id' : 'ids'} ${listSome(set, 5)}`;
};

/**
 * The ids dimension: sets of string ids (tickets, sources, accounts).
 *
 * @example
 * idsAlgebra.difference(idsAlgebra.normalise({ ids: ['a', 'b', 'c'] }), idsAlgebra.normalise({ ids: ['b'] }))
 * // ['a', 'c']
 */
export const idsAlgebra: ScopeAlgebra<IdSet> = {
  dimension: 'ids',
  normalise: (scope) => idSet(asIdsScope(scope).ids),
  toScopes: (set) => (set.length === 0 ? [] : [{ ids: [...set] }]),
  split: (set, parts) => chunkEvenly(set, parts),
  union: (a, b) => mergeIds(a, b, (x, y) => x || y),
  intersect: (a, b) => (searchSmaller(a, b) ? filterBySearch(a, b, true) : searchSmaller(b, a) ? filterBySearch(b, a, true) : mergeIds(a, b, (x, y) => x && y)),
  difference: (a, b) => (searchSmaller(a, b) ? filterBySearch(a, b, false) : mergeIds(a, b, (x, y) => x && !y)),
  overlaps: (a, b) =>
    searchSmaller(a, b) ? a.some((id) => holds(b, id)) : searchSmaller(b, a) ? b.some((id) => holds(a, id)) : mergeIds(a, b, (x, y) => x && y).length > 0,
  isEmpty: (set) => set.length === 0,
  equals: (a, b) => a.length === b.length && a.every((id, i) => id === b[i]),
  describe: (set, style = 'prose') => describeIds(set, style),
};
