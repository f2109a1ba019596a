import type { Dimension, Scope } from '../contract';

/** How {@link ScopeAlgebra.describe} writes a region. */
export type DescribeStyle =
  /** Exact and machine-like, as problem messages quote it: `2025-06-28..2025-07-01` (half-open). */
  | 'exact'
  /** For people, as statements quote it: `2025-06-28 to 2025-06-30` (inclusive dates). */
  | 'prose';

/**
 * The one interface the three scope dimensions implement. Each works on its own normalised
 * value `N` (epoch-ms interval sets for time, sorted unique arrays for ids, per-file line
 * interval sets for paths) and writes results back in the contract's form.
 *
 * Values passed to one algebra must come from that algebra's `normalise`.
 *
 * @example
 * const a = timeAlgebra.normalise({ from: '2025-01-01', toExclusive: '2025-07-01' });
 * const b = timeAlgebra.normalise({ from: '2025-04-01', toExclusive: '2025-06-28' });
 * timeAlgebra.toScopes(timeAlgebra.difference(a, b));
 * // [{ from: '2025-01-01', toExclusive: '2025-04-01' }, { from: '2025-06-28', toExclusive: '2025-07-01' }]
 */
export interface ScopeAlgebra<N> {
  readonly dimension: Dimension;
  /** Reads and validates one scope; throws `ScopeError` naming the field, or `DimensionMismatchError`. */
  normalise(scope: Scope): N;
  /** Contract scopes covering exactly `value` (a time set with several intervals gives several). */
  toScopes(value: N): Scope[];
  /** `parts` near-equal pieces whose union is `value`; throws `SplitError` when impossible. */
  split(value: N, parts: number): N[];
  union(a: N, b: N): N;
  intersect(a: N, b: N): N;
  /** What `a` has and `b` lacks: the gaps `b` leaves in `a`. */
  difference(a: N, b: N): N;
  overlaps(a: N, b: N): boolean;
  isEmpty(value: N): boolean;
  equals(a: N, b: N): boolean;
  /** A short human description of the region. */
  describe(value: N, style?: DescribeStyle): string;
}

/**
 * Which dimension a scope object belongs to, by its fields.
 *
 * @example
 * dimensionOf({ ids: ['t-1'] }) // 'ids'
 */
export const dimensionOf = (scope: Scope): Dimension => {
  if ('from' in scope) return 'time';
  if ('ids' in scope) return 'ids';
  return 'paths';
};

/**
 * The `parts + 1` cut positions that split `total` units into near-equal whole pieces, the
 * larger pieces last. Exact integer arithmetic, so no piece drifts by rounding.
 *
 * @example
 * evenCuts(10, 4) // [0, 2, 5, 7, 10]
 */
export const evenCuts = (total: number, parts: number): number[] => {
  const quotient = Math.floor(total / parts);
  const remainder = total % parts;
  return Array.from({ length: parts + 1 }, (_, i) => i * quotient + Math.floor((i * remainder) / parts));
};
