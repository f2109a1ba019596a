/**
 * Sets of half-open numeric intervals, the common currency of the time dimension (epoch
 * milliseconds) and the paths dimension (line numbers, where inclusive `[first, last]` is
 * stored as `[first, last + 1)`).
 *
 * A set is a flat array `[s0, e0, s1, e1, …]`: sorted, disjoint and never adjacent (touching
 * intervals are merged), so two equal sets are equal arrays. `Infinity` is a valid end and
 * means "to the end" (of a file). Flat arrays keep the hot paths free of per-interval objects.
 */
export type IntervalSet = readonly number[];

/** The empty set. */
export const EMPTY_SET: IntervalSet = Object.freeze([]);

/**
 * Builds a set from `[start, end)` pairs in any order, merging overlaps and neighbours.
 * Pairs with `start >= end` are empty and ignored.
 *
 * @example
 * intervalSet([[5, 8], [1, 3], [3, 4]]) // [1, 4, 5, 8]
 */
export const intervalSet = (pairs: Iterable<readonly [number, number]>): IntervalSet => {
  const sorted = [...pairs].filter(([s, e]) => s < e).sort((a, b) => a[0] - b[0]);
  const out: number[] = [];
  for (const [s, e] of sorted) {
    const last = out.length - 1;
    if (last > 0 && s <= (out[last] as number)) {
      if (e > (out[last] as number)) out[last] = e;
    } else {
      out.push(s, e);
    }
  }
  return out;
};

/**
 * Walks the boundaries of both sets in order and keeps the stretches where `keep(inA, inB)`
 * holds. Union, intersection and difference are this one sweep with different predicates.
 */
const combine = (a: IntervalSet, b: IntervalSet, keep: (inA: boolean, inB: boolean) => boolean): IntervalSet => {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  let open = false;
  while (i < a.length || j < b.length) {
    const x = i < a.length ? (a[i] as number) : undefined;
    const y = j < b.length ? (b[j] as number) : undefined;
    const at = x === undefined ? (y as number) : y === undefined ? x : Math.min(x, y);
    if (x === at) i += 1;
    if (y === at) j += 1;
    // Even positions are starts: having passed an odd count of boundaries means "inside".
    const now = keep(i % 2 === 1, j % 2 === 1);
    if (now !== open) {
      out.push(at);
      open = now;
    }
  }
  return out;
};

/** Points in either set. @example unionSets([1, 3], [2, 5]) // [1, 5] */
export const unionSets = (a: IntervalSet, b: IntervalSet): IntervalSet => combine(a, b, (x, y) => x || y);

/** Points in both sets. @example intersectSets([1, 5], [3, 9]) // [3, 5] */
export const intersectSets = (a: IntervalSet, b: IntervalSet): IntervalSet => combine(a, b, (x, y) => x && y);

/** Points in `a` but not in `b`. @example subtractSets([1, 9], [3, 5]) // [1, 3, 5, 9] */
export const subtractSets = (a: IntervalSet, b: IntervalSet): IntervalSet => combine(a, b, (x, y) => x && !y);

/** True when the sets share at least one point. @example setsOverlap([1, 3], [3, 5]) // false */
export const setsOverlap = (a: IntervalSet, b: IntervalSet): boolean => intersectSets(a, b).length > 0;

/** True when both sets hold exactly the same points. @example setsEqual([1, 3], intervalSet([[2, 3], [1, 2]])) // true */
export const setsEqual = (a: IntervalSet, b: IntervalSet): boolean => a.length === b.length && a.every((value, index) => value === b[index]);

/**
 * True when `[start, end)` lies inside one interval of `set` (binary search, no allocation).
 *
 * @example
 * containsRange([0, 10, 20, 30], 22, 25) // true
 */
export const containsRange = (set: IntervalSet, start: number, end: number): boolean => {
  let lo = 0;
  let hi = set.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const s = set[2 * mid] as number;
    const e = set[2 * mid + 1] as number;
    if (start < s) hi = mid - 1;
    else if (start >= e) lo = mid + 1;
    else return end <= e;
  }
  return false;
};

/** The `[start, end)` pairs of a set, for formatting. @example pairsOf([1, 3, 5, 8]) // [[1, 3], [5, 8]] */
export const pairsOf = (set: IntervalSet): Array<[number, number]> => {
  const pairs: Array<[number, number]> = [];
  for (let k = 0; k < set.length; k += 2) pairs.push([set[k] as number, set[k + 1] as number]);
  return pairs;
};
