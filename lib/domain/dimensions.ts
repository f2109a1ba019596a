import type { Dimension, FileScope, Scope } from '../contract';
import { idsAlgebra, type IdSet } from './ids';
import { pathsAlgebra, type PathSet } from './paths';
import type { DescribeStyle, ScopeAlgebra } from './scope';
import { timeAlgebra, type TimeSet } from './time';

/** A normalised region of any dimension. */
export type Region = TimeSet | IdSet | PathSet;

const ALGEBRAS = { time: timeAlgebra, ids: idsAlgebra, paths: pathsAlgebra } as const;

/**
 * The algebra of a dimension, typed over every normalised form so dimension-agnostic code
 * (reconcile, follow-ups, statements) can hold one. Only mix values from the same algebra.
 *
 * @example
 * const algebra = algebraFor(universe.dimension);
 * const gaps = algebra.difference(algebra.normalise(assigned), algebra.normalise(observedScope));
 */
export const algebraFor = (dimension: Dimension): ScopeAlgebra<Region> => ALGEBRAS[dimension] as ScopeAlgebra<Region>;

/**
 * The contract scopes of `a − b` in one call: the parts of `a` that `b` does not cover.
 *
 * @example
 * scopeDifference('ids', { ids: ['a', 'b'] }, { ids: ['a'] }) // [{ ids: ['b'] }]
 */
export const scopeDifference = (dimension: Dimension, a: Scope, b: Scope): Scope[] => {
  const algebra = algebraFor(dimension);
  return algebra.toScopes(algebra.difference(algebra.normalise(a), algebra.normalise(b)));
};

/**
 * Describes a contract scope for people or for problem messages.
 *
 * @example
 * describeScope('time', { from: '2025-06-28', toExclusive: '2025-07-01' }) // '2025-06-28 to 2025-06-30'
 */
export const describeScope = (dimension: Dimension, scope: Scope, style: DescribeStyle = 'prose'): string => {
  const algebra = algebraFor(dimension);
  return algebra.describe(algebra.normalise(scope), style);
};

/**
 * True when two contract scopes of one dimension cover exactly the same region.
 *
 * @example
 * sameScope('ids', { ids: ['b', 'a'] }, { ids: ['a', 'b', 'a'] }) // true
 */
export const sameScope = (dimension: Dimension, a: Scope, b: Scope): boolean => {
  const algebra = algebraFor(dimension);
  return algebra.equals(algebra.normalise(a), algebra.normalise(b));
};

/** The region fields a problem, gap or overlap carries (exactly those of one dimension). */
export interface RegionFields {
  readonly from?: string | undefined;
  readonly toExclusive?: string | undefined;
  readonly ids?: readonly string[] | undefined;
  readonly files?: readonly FileScope[] | undefined;
}

/**
 * The contract scope carried by a problem, gap or overlap, without its other fields.
 *
 * @example
 * regionOf({ code: 'assignment_gap', message: '…', from: '2025-06-28', toExclusive: '2025-07-01' })
 * // { from: '2025-06-28', toExclusive: '2025-07-01' }
 */
export const regionOf = (value: RegionFields): Scope => {
  if (value.from !== undefined && value.toExclusive !== undefined) return { from: value.from, toExclusive: value.toExclusive };
  if (value.ids !== undefined) return { ids: [...value.ids] };
  return { files: [...(value.files ?? [])] };
};

/**
 * True when a problem, gap or overlap carries a region.
 *
 * @example
 * hasRegion({ code: 'missing_outcome', message: '…' }) // false
 */
export const hasRegion = (value: RegionFields): boolean => value.from !== undefined || value.ids !== undefined || value.files !== undefined;
