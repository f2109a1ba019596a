import type { IdsUniverse, PathsUniverse, Problem, Scope, TimeUniverse, Universe } from '../contract';
import { MAX_YEAR, yearInOffset } from '../contract';
import { algebraFor, describeScope } from './dimensions';
import { ScopeError } from './errors';
import { indexIds, idSet, type IdIndex } from './ids';
import { containsRange, EMPTY_SET, intervalSet, pairsOf, subtractSets, type IntervalSet } from './intervals';
import { fileScope, pathSet } from './paths';
import { dimensionOf } from './scope';
import { readTimeRange } from './time';
import { formatOf, formatTimePoint, pointMs, readTimePoint, type TimeFormat } from './time-point';
import { listWords } from './words';

/** One piece of a proposed tiling. */
export interface Tile {
  readonly id: string;
  readonly scope: Scope;
  /** Field path of `scope` in the request (`subtasks.1.scope`); problems extend it. */
  readonly path?: string;
}

type Emit = (problem: Problem) => void;

/** `subtasks.1.scope` + `from` → `subtasks.1.scope.from`; no path when the tile has none. */
const pathOf = (tile: Tile | undefined, field?: string): { path?: string } => {
  if (!tile?.path) return {};
  return { path: field ? `${tile.path}.${field}` : tile.path };
};

const mismatch = (tile: Tile, message: string): Problem => ({ code: 'dimension_mismatch', message, subtaskIds: [tile.id], ...pathOf(tile) });

const dimensionMismatch = (tile: Tile, expected: string, actual: string): Problem =>
  mismatch(tile, `subtask ${tile.id} has ${/^[aeiou]/.test(actual) ? 'an' : 'a'} ${actual} scope but the universe is ${expected}`);

const formMismatch = (tile: Tile, universeForm: 'date' | 'instant'): Problem =>
  mismatch(tile, `subtask ${tile.id} must use ${universeForm === 'date' ? 'dates' : 'instants'} like the universe (both ends)`);

/** Calls `each` for the parts of `[from, to)` inside `universe` (a handful of intervals at most). */
const clip = (universe: IntervalSet, from: number, to: number, each: (s: number, e: number) => void): void => {
  for (let k = 0; k < universe.length; k += 2) {
    const s = Math.max(from, universe[k] as number);
    const e = Math.min(to, universe[k + 1] as number);
    if (s < e) each(s, e);
  }
};

/** Callbacks of {@link sweep}: tile indexes, -1 where there is no neighbour. */
interface SweepHandlers {
  gap(from: number, to: number, before: number, after: number): void;
  overlap(from: number, to: number, first: number, second: number): void;
}

/**
 * A cursor sweep over sorted entries, extended to report every overlapping pair exactly once: entries are
 * visited by start; a stretch the reach has not arrived at is a gap (clipped to the universe),
 * and each still-open entry that a new one starts inside overlaps it on
 * `[start, min(ends))`. Sorting dominates; the sweep is linear unless many entries overlap.
 */
const sweep = (starts: ArrayLike<number>, ends: ArrayLike<number>, members: number[], universe: IntervalSet, on: SweepHandlers): void => {
  members.sort((a, b) => (starts[a] as number) - (starts[b] as number) || (ends[a] as number) - (ends[b] as number) || a - b);
  let reach = Number.NEGATIVE_INFINITY;
  let reacher = -1;
  const active: number[] = [];
  for (const i of members) {
    const start = starts[i] as number;
    const end = ends[i] as number;
    if (start > reach) clip(universe, reach, start, (s, e) => on.gap(s, e, reacher, i));
    // Entries that ended are dropped in place: a new array per entry showed in profiles at 100,000 tiles.
    let open = 0;
    for (const j of active) {
      if ((ends[j] as number) <= start) continue;
      on.overlap(start, Math.min(end, ends[j] as number), j, i);
      active[open] = j;
      open += 1;
    }
    active.length = open;
    active.push(i);
    if (end > reach) {
      reach = end;
      reacher = i;
    }
  }
  clip(universe, reach, Number.POSITIVE_INFINITY, (s, e) => on.gap(s, e, reacher, -1));
};

/** Problem texts and paths for one dimension's gaps and overlaps, given tile neighbours. */
interface RegionProblems {
  /** The region `[from, to)`; `tile` is the entry that holds it when it may lie outside the universe. */
  region(from: number, to: number, tile?: number): Scope;
  /** Field of the tile the problem is attributed to (`from`, `toExclusive`, `files`). */
  readonly startField: string;
  readonly endField: string;
}

const gapAndOverlapHandlers = (
  tiles: readonly Tile[],
  owner: (entry: number) => number,
  dimension: 'time' | 'paths',
  text: RegionProblems,
  emit: Emit,
): SweepHandlers => ({
  gap: (from, to, before, after) => {
    const region = text.region(from, to);
    const neighbours = [before, after].filter((e) => e >= 0).map((e) => tiles[owner(e)] as Tile);
    const between = neighbours.length > 0 ? ` (next to ${listWords(neighbours.map((t) => t.id))})` : '';
    const blame = after >= 0 ? pathOf(tiles[owner(after)], text.startField) : pathOf(neighbours[0], text.endField);
    emit({
      code: 'assignment_gap',
      message: `no subtask covers ${describeScope(dimension, region, 'exact')}${between}`,
      ...blame,
      subtaskIds: neighbours.map((t) => t.id),
      ...region,
    });
  },
  overlap: (from, to, first, second) => {
    const region = text.region(from, to, second);
    const [a, b] = [tiles[owner(first)] as Tile, tiles[owner(second)] as Tile];
    emit({
      code: 'assignment_overlap',
      message: `subtasks ${a.id} and ${b.id} both cover ${describeScope(dimension, region, 'exact')}`,
      ...pathOf(b, text.startField),
      subtaskIds: [a.id, b.id],
      ...region,
    });
  },
});

const outsideProblem = (tile: Tile, dimension: 'time' | 'ids' | 'paths', region: Scope, field: string, universeText: string): Problem => ({
  code: 'scope_outside_universe',
  message: `subtask ${tile.id} covers ${describeScope(dimension, region, 'exact')}, outside the universe ${universeText}`,
  ...pathOf(tile, field),
  subtaskIds: [tile.id],
  ...region,
});

const timeRegion =
  (format: TimeFormat) =>
  (from: number, to: number): Scope => ({
    from: formatTimePoint(from, format),
    toExclusive: formatTimePoint(to, format),
  });

/** True when both ends of `[from, to)` have a four-digit year in `format`'s offset. */
const writable = (format: TimeFormat, from: number, to: number): boolean =>
  yearInOffset(from, format.offsetMinutes) >= 0 && yearInOffset(to, format.offsetMinutes) <= MAX_YEAR;

/**
 * Regions are written in the universe's format; a region outside the universe may have no
 * four-digit year there (a tile ending at `9999-12-31T23:00:00-12:00` in a `Z` universe), so
 * it is written in the format of the tile that holds it, where it always has one.
 */
const tileTimeRegion =
  (universe: TimeFormat, tiles: readonly Tile[]) =>
  (from: number, to: number, tile?: number): Scope => {
    const scope = tile === undefined ? undefined : tiles[tile]?.scope;
    const own = scope !== undefined && 'from' in scope ? readTimePoint(scope.from) : undefined;
    return timeRegion(writable(universe, from, to) || own === undefined ? universe : formatOf(own))(from, to);
  };

/** Reads a tile's bounds on the fast path; falls back to the strict reader to throw its error. */
const tileBounds = (scope: { from: string; toExclusive: string }): [number, number] => {
  const start = pointMs(scope.from);
  const end = pointMs(scope.toExclusive);
  if (start < end) return [start, end];
  const set = readTimeRange(scope); // throws a ScopeError naming the field
  return [set.bounds[0] as number, set.bounds[1] as number];
};

const tileTime = (universe: TimeUniverse, tiles: readonly Tile[], emit: Emit): void => {
  const whole = readTimeRange(universe);
  const dates = whole.format.form === 'date';
  const region = tileTimeRegion(whole.format, tiles);
  const starts = new Float64Array(tiles.length);
  const ends = new Float64Array(tiles.length);
  const members: number[] = [];
  const universeText = describeScope('time', universe, 'exact');
  tiles.forEach((tile, i) => {
    const scope = tile.scope;
    if (!('from' in scope)) return emit(dimensionMismatch(tile, 'time', dimensionOf(scope)));
    // A valid date is exactly 10 characters; every valid instant is longer.
    if ((scope.from.length === 10) !== dates || (scope.toExclusive.length === 10) !== dates) {
      return emit(formMismatch(tile, whole.format.form));
    }
    const [start, end] = tileBounds(scope);
    starts[i] = start;
    ends[i] = end;
    members.push(i);
    if (!containsRange(whole.bounds, start, end)) {
      for (const [s, e] of pairsOf(subtractSets([start, end], whole.bounds))) {
        emit(outsideProblem(tile, 'time', region(s, e, i), s < (whole.bounds[0] as number) ? 'from' : 'toExclusive', universeText));
      }
    }
  });
  sweep(
    starts,
    ends,
    members,
    whole.bounds,
    gapAndOverlapHandlers(tiles, (i) => i, 'time', { region, startField: 'from', endField: 'toExclusive' }, emit),
  );
};

const tilePaths = (universe: PathsUniverse, tiles: readonly Tile[], emit: Emit): void => {
  const whole = pathSet(universe.files);
  const universeText = describeScope('paths', universe, 'exact');
  const byFile = new Map<string, { starts: number[]; ends: number[]; owners: number[] }>();
  for (const path of whole.keys()) byFile.set(path, { starts: [], ends: [], owners: [] });
  tiles.forEach((tile, t) => {
    const scope = tile.scope;
    if (!('files' in scope)) return emit(dimensionMismatch(tile, 'paths', dimensionOf(scope)));
    const outside: Scope[] = [];
    for (const [path, lines] of pathSet(scope.files)) {
      const entries = byFile.get(path) ?? { starts: [], ends: [], owners: [] };
      byFile.set(path, entries);
      for (const [s, e] of pairsOf(lines)) {
        entries.starts.push(s);
        entries.ends.push(e);
        entries.owners.push(t);
      }
      const beyond = subtractSets(lines, whole.get(path) ?? EMPTY_SET);
      if (beyond.length > 0) outside.push({ files: [fileScope(path, beyond)] });
    }
    if (outside.length > 0) emit(outsideProblem(tile, 'paths', { files: outside.flatMap((o) => ('files' in o ? o.files : [])) }, 'files', universeText));
  });
  for (const [path, entries] of byFile) {
    const region = (from: number, to: number): Scope => ({ files: [fileScope(path, intervalSet([[from, to]]))] });
    const members = entries.starts.map((_, k) => k);
    const handlers = gapAndOverlapHandlers(tiles, (k) => entries.owners[k] as number, 'paths', { region, startField: 'files', endField: 'files' }, emit);
    sweep(entries.starts, entries.ends, members, whole.get(path) ?? EMPTY_SET, handlers);
  }
};

/** Adds `tile` as another owner of universe position `p` (an overlap), once. */
const addOwner = (extra: Map<number, number[]>, p: number, tile: number): void => {
  const owners = extra.get(p);
  if (!owners) extra.set(p, [tile]);
  else if (!owners.includes(tile)) owners.push(tile);
};

const idsOverlapProblems = (tiles: readonly Tile[], index: IdIndex, owner: Int32Array, extra: Map<number, number[]>): Problem[] => {
  const pairs = new Map<string, { a: number; b: number; ids: string[] }>();
  for (const [p, others] of extra) {
    const all = [owner[p] as number, ...others].sort((x, y) => x - y);
    all.forEach((a, i) => {
      for (const b of all.slice(i + 1)) {
        const key = `${a}:${b}`;
        const pair = pairs.get(key) ?? { a, b, ids: [] };
        pairs.set(key, pair);
        pair.ids.push(index.ids[p] as string);
      }
    });
  }
  return [...pairs.values()].map(({ a, b, ids }) => {
    const [first, second] = [tiles[a] as Tile, tiles[b] as Tile];
    const region = { ids: [...idSet(ids)] };
    return {
      code: 'assignment_overlap' as const,
      message: `subtasks ${first.id} and ${second.id} are both assigned ${describeScope('ids', region, 'exact')}`,
      ...pathOf(second, 'ids'),
      subtaskIds: [first.id, second.id],
      ...region,
    };
  });
};

/**
 * True when the tiles, in their order, are the universe's written ids cut into runs, as the
 * planner cuts them (`chunkEvenly`, `chunkBySize`), and no id repeats. The walk stops at the
 * first difference, so a plan cut any other way pays almost nothing for asking. The Set holds
 * the assigned strings rather than the universe's: their hashes stay cached on the strings, and
 * reconcile hashes them again when it compares each assignment with its observation.
 */
const cutInOrderOnce = (written: readonly string[], tiles: readonly Tile[]): boolean => {
  const seen = new Set<string>();
  let p = 0;
  for (const tile of tiles) {
    if (!('ids' in tile.scope)) return false;
    for (const id of tile.scope.ids) {
      if (written[p] !== id) return false;
      seen.add(id);
      p += 1;
    }
  }
  return p === written.length && seen.size === p;
};

const tileIds = (universe: IdsUniverse, tiles: readonly Tile[], emit: Emit): void => {
  // Tiles that cut a universe without repeats in order assign each id exactly once: no gap,
  // overlap or outside id is possible, so the check below would find nothing. Proving it takes
  // one walk and one Set; the check below indexes every id's position and looks every assigned
  // id up in that index, which at 1,000,000 ids costs about twice a sort of them.
  if (cutInOrderOnce(universe.ids, tiles)) return;
  const index = indexIds(universe.ids);
  for (const { id, at } of index.duplicates) {
    emit({ code: 'duplicate_universe_id', message: `id ${id} appears more than once in the universe`, path: `universe.ids.${at}`, ids: [id] });
  }
  const owner = new Int32Array(index.ids.length).fill(-1);
  const extra = new Map<number, number[]>();
  tiles.forEach((tile, t) => {
    const scope = tile.scope;
    if (!('ids' in scope)) return emit(dimensionMismatch(tile, 'ids', dimensionOf(scope)));
    const outside: string[] = [];
    for (const id of scope.ids) {
      const p = index.position.get(id);
      if (p === undefined) outside.push(id);
      else if (owner[p] === -1) owner[p] = t;
      else if (owner[p] !== t) addOwner(extra, p, t);
    }
    if (outside.length > 0) emit(outsideProblem(tile, 'ids', { ids: [...idSet(outside)] }, 'ids', `of ${index.ids.length} ids`));
  });
  const unassigned: string[] = [];
  for (let p = 0; p < owner.length; p += 1) if (owner[p] === -1) unassigned.push(index.ids[p] as string);
  if (unassigned.length > 0) {
    const region = { ids: [...idSet(unassigned)] };
    emit({
      code: 'assignment_gap',
      message: `no subtask is assigned ${describeScope('ids', region, 'exact')}`,
      path: 'universe.ids',
      subtaskIds: [],
      ...region,
    });
  }
  idsOverlapProblems(tiles, index, owner, extra).forEach(emit);
};

/**
 * Checks that tiles cover their universe exactly once, and says precisely where they do not:
 * every gap (with the neighbouring subtasks), every overlapping pair (with both ids), every
 * part of a tile outside the universe, and tiles of the wrong dimension. An empty list means
 * the tiles tile the universe. Time and paths use a sort and one sweep; ids use a hash index,
 * which stays linear at a million ids.
 *
 * @example
 * checkTiling({ dimension: 'time', from: '2025-01-01', toExclusive: '2026-01-01' }, [
 *   { id: 'A', scope: { from: '2025-01-01', toExclusive: '2025-04-01' } },
 *   { id: 'B', scope: { from: '2025-03-01', toExclusive: '2026-01-01' } },
 * ]);
 * // [{ code: 'assignment_overlap', subtaskIds: ['A', 'B'], from: '2025-03-01', toExclusive: '2025-04-01', … }]
 */
export const checkTiling = (universe: Universe, tiles: readonly Tile[]): Problem[] => {
  const problems: Problem[] = [];
  const emit: Emit = (problem) => void problems.push(problem);
  if (universe.dimension === 'time') tileTime(universe, tiles, emit);
  else if (universe.dimension === 'paths') tilePaths(universe, tiles, emit);
  else tileIds(universe, tiles, emit);
  return problems;
};

/** The universe a scope would be if it were the whole: what its pieces must tile. */
export const universeOfScope = (scope: Scope): Universe => {
  const dimension = dimensionOf(scope);
  const algebra = algebraFor(dimension);
  const [whole] = algebra.toScopes(algebra.normalise(scope));
  if (dimension === 'time' && whole !== undefined && 'from' in whole) return { dimension: 'time', ...whole };
  if (dimension === 'ids' && whole !== undefined && 'ids' in whole) return { dimension: 'ids', ids: whole.ids };
  if (whole !== undefined && 'files' in whole) return { dimension: 'paths', files: whole.files };
  throw new ScopeError('scope', scope, 'is empty');
};
