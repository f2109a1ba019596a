import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Problem, RunRequestInput, Scope, Universe } from '../../lib/contract';
import { checkTiling, validateRunRequest } from '../../lib/domain';
import { PLAN_OPTIONS, testCatalog } from './fixtures';

/**
 * Properties of the tiling check, 1,000+ cases each. Expected values are computed here from
 * the generator's own integers, and reported bounds are read back with `Date.parse`, so the
 * domain's own parser and formatter are not used to judge themselves.
 */
const RUNS = { numRuns: 1000 };
const DAY = 86_400_000;

/** A numeric problem: code, half-open bounds in units, the subtasks named. */
interface Expected {
  readonly code: 'assignment_gap' | 'assignment_overlap';
  readonly from: number;
  readonly to: number;
  readonly subtaskIds: readonly string[];
}

/** A tiling of `[0, total)` with some boundaries pushed apart (gaps) or past each other (overlaps). */
interface Perturbed {
  readonly tiles: ReadonlyArray<{ id: string; start: number; end: number }>;
  readonly expected: Expected[];
  readonly total: number;
}

type Action = 'none' | 'gap' | 'overlap';

/**
 * Tile lengths plus one action per boundary. A shift never exceeds a third of either
 * neighbouring tile, so injected gaps and overlaps cannot touch each other.
 */
const perturbedTiling = (maxTiles: number, maxLength: number, prefix = '') =>
  fc
    .record({
      lengths: fc.array(fc.integer({ min: 1, max: maxLength }), { minLength: 1, maxLength: maxTiles }),
      actions: fc.array(fc.tuple(fc.constantFrom<Action>('none', 'none', 'gap', 'overlap'), fc.integer({ min: 1, max: 1_000_000 })), {
        minLength: maxTiles + 1,
        maxLength: maxTiles + 1,
      }),
    })
    .map(({ lengths, actions }): Perturbed => {
      const cuts = lengths.reduce<number[]>((acc, length) => [...acc, (acc[acc.length - 1] as number) + length], [0]);
      const ids = lengths.map((_, i) => `${prefix}T${i}`);
      const starts = cuts.slice(0, -1);
      const ends = cuts.slice(1);
      const expected: Expected[] = [];
      const n = lengths.length;
      cuts.forEach((cut, j) => {
        const [kind, seed] = actions[j] as [Action, number];
        const neighbours = [lengths[j - 1], lengths[j]].filter((l): l is number => l !== undefined);
        const room = Math.floor(Math.min(...neighbours) / 3);
        if (kind === 'none' || room < 1) return;
        const shift = 1 + (seed % room);
        if (j === 0 && kind === 'gap') {
          starts[0] = cut + shift;
          expected.push({ code: 'assignment_gap', from: cut, to: cut + shift, subtaskIds: [ids[0] as string] });
        } else if (j === n && kind === 'gap') {
          ends[n - 1] = cut - shift;
          expected.push({ code: 'assignment_gap', from: cut - shift, to: cut, subtaskIds: [ids[n - 1] as string] });
        } else if (j > 0 && j < n && kind === 'gap') {
          ends[j - 1] = cut - shift;
          expected.push({ code: 'assignment_gap', from: cut - shift, to: cut, subtaskIds: [ids[j - 1] as string, ids[j] as string] });
        } else if (j > 0 && j < n) {
          ends[j - 1] = cut + shift;
          expected.push({ code: 'assignment_overlap', from: cut, to: cut + shift, subtaskIds: [ids[j - 1] as string, ids[j] as string] });
        }
      });
      return { tiles: ids.map((id, i) => ({ id, start: starts[i] as number, end: ends[i] as number })), expected, total: cuts[n] as number };
    });

const byPosition = (a: { from: number; code: string }, b: { from: number; code: string }): number => a.from - b.from || a.code.localeCompare(b.code);

/** Union of the tiles, merged here without the domain: true when it is exactly `[0, total)`. */
const unionIsWhole = (tiles: Perturbed['tiles'], total: number): boolean => {
  const sorted = [...tiles].sort((a, b) => a.start - b.start);
  let reach = 0;
  for (const tile of sorted) {
    if (tile.start > reach) return false;
    reach = Math.max(reach, tile.end);
  }
  return reach === total && (sorted[0]?.start ?? 0) === 0;
};

/** How a time dimension form writes unit `n` after the universe start, and reads it back. */
interface TimeForm {
  readonly name: string;
  readonly unit: number;
  write(ms: number): string;
}

const DATES: TimeForm = { name: 'dates', unit: DAY, write: (ms) => new Date(ms).toISOString().slice(0, 10) };
const instantsAt = (offsetMinutes: number, suffix: string): TimeForm => ({
  name: `instants ${suffix}`,
  unit: 1000,
  write: (ms) => `${new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, 19)}${suffix}`,
});

describe.each([DATES, instantsAt(0, 'Z'), instantsAt(330, '+05:30'), instantsAt(-480, '-08:00')])('time tilings written as $name', (form) => {
  const origin = fc.integer({ min: 0, max: 40_000 }).map((days) => Date.UTC(1990, 0, 1) + days * DAY);
  const at = (base: number, n: number) => form.write(base + n * form.unit);
  const universeOf = (base: number, total: number): Universe => ({ dimension: 'time', from: at(base, 0), toExclusive: at(base, total) });
  const toUnits = (base: number, p: Problem): Expected => ({
    code: p.code as Expected['code'],
    from: (Date.parse(p.from ?? '') - base) / form.unit,
    to: (Date.parse(p.toExclusive ?? '') - base) / form.unit,
    subtaskIds: p.subtaskIds ?? [],
  });

  it('reports every injected gap and overlap exactly once, with exact bounds and subtask ids', () => {
    fc.assert(
      fc.property(origin, perturbedTiling(25, 90), (base, { tiles, expected, total }) => {
        const problems = checkTiling(
          universeOf(base, total),
          tiles.map((t) => ({ id: t.id, scope: { from: at(base, t.start), toExclusive: at(base, t.end) } })),
        );
        expect(problems.map((p) => toUnits(base, p)).sort(byPosition)).toEqual([...expected].sort(byPosition));
      }),
      RUNS,
    );
  });

  it('reports no gap exactly when the union of the tiles is the universe', () => {
    fc.assert(
      fc.property(origin, perturbedTiling(12, 30), (base, { tiles, total }) => {
        const problems = checkTiling(
          universeOf(base, total),
          tiles.map((t) => ({ id: t.id, scope: { from: at(base, t.start), toExclusive: at(base, t.end) } })),
        );
        expect(problems.some((p) => p.code === 'assignment_gap')).toBe(!unionIsWhole(tiles, total));
      }),
      RUNS,
    );
  });

  it('passes every tiling the planner generates, whose pieces meet end to start', () => {
    const split = fc.oneof(
      fc.integer({ min: 1, max: 40 }).map((parts) => ({ parts })),
      fc.constantFrom('day', 'week', 'month', 'quarter', 'year').map((by) => ({ by })),
      fc.uniqueArray(fc.integer({ min: 1, max: 899 }), { minLength: 1, maxLength: 30 }).map((cuts) => ({ cuts })),
    );
    fc.assert(
      fc.property(origin, fc.integer({ min: 40, max: 900 }), split, (base, total, how) => {
        const universe = universeOf(base, total);
        const spec =
          'cuts' in how
            ? {
                boundaries: [...how.cuts]
                  .filter((c) => c < total)
                  .sort((a, b) => a - b)
                  .map((c) => at(base, c)),
              }
            : how;
        if ('boundaries' in spec && spec.boundaries.length === 0) return;
        const request: RunRequestInput = {
          goal: 'property',
          universe,
          split: { worker: 'tax-statements', deadlineSeconds: 10, budget: { modelCalls: 1, estimatedCostPerCall: 1 }, ...spec },
          budget: { modelCalls: 1, costLimit: 1 },
        };
        const result = validateRunRequest(request, testCatalog, PLAN_OPTIONS);
        if (!result.ok) {
          // Only a split into more than 1000 pieces (by day/week over ~3 years of seconds) may be refused.
          expect(result.problems.map((p) => p.code)).toEqual(['plan_too_large']);
          return;
        }
        const scopes = result.subtasks.map((s) => s.assigned as { from: string; toExclusive: string });
        expect(
          checkTiling(
            universe,
            result.subtasks.map((s) => ({ id: s.id, scope: s.assigned })),
          ),
        ).toEqual([]);
        expect(scopes[0]?.from).toBe('from' in universe ? universe.from : '');
        expect(scopes[scopes.length - 1]?.toExclusive).toBe('toExclusive' in universe ? universe.toExclusive : '');
        scopes.slice(1).forEach((scope, i) => expect(Date.parse(scope.from)).toBe(Date.parse(scopes[i]?.toExclusive ?? '')));
      }),
      RUNS,
    );
  });
});

describe('paths tilings: line ranges of several files', () => {
  const files = fc
    .array(perturbedTiling(10, 60), { minLength: 1, maxLength: 3 })
    .map((perFile) => perFile.map((p, f) => ({ path: `src/f${f}.ts`, ...p, tiles: p.tiles.map((t) => ({ ...t, id: `F${f}${t.id}` })) })));
  // Lines are 1-based and inclusive: unit n of the generator is line n + 1.
  const lines = (start: number, end: number): [number, number] => [start + 1, end];

  it('reports every injected gap and overlap exactly once, per file, with exact inclusive lines', () => {
    fc.assert(
      fc.property(files, (perFile) => {
        const universe: Universe = { dimension: 'paths', files: perFile.map((f) => ({ path: f.path, lines: [lines(0, f.total)] })) };
        const tiles = perFile.flatMap((f) => f.tiles.map((t) => ({ id: t.id, scope: { files: [{ path: f.path, lines: [lines(t.start, t.end)] }] } as Scope })));
        const expected = perFile.flatMap((f) =>
          f.expected.map((e) => ({ ...e, subtaskIds: e.subtaskIds.map((id) => `F${f.path.slice(5, 6)}${id}`), path: f.path })),
        );
        const reported = checkTiling(universe, tiles).map((p) => {
          const [file] = p.files ?? [];
          const [range] = file?.lines ?? [];
          return { code: p.code, from: (range?.[0] ?? 0) - 1, to: range?.[1] ?? 0, subtaskIds: p.subtaskIds ?? [], path: file?.path };
        });
        type Located = { path?: string | undefined; from: number; code: string };
        const order = (a: Located, b: Located) => (a.path ?? '').localeCompare(b.path ?? '') || byPosition(a, b);
        expect(reported.sort(order)).toEqual(expected.sort(order));
      }),
      RUNS,
    );
  });
});

describe('ids tilings', () => {
  /** A universe of unique ids, cut into chunks, with some ids dropped (gaps) and some copied into another chunk (overlaps). */
  const injected = fc
    .record({
      size: fc.integer({ min: 1, max: 150 }),
      cuts: fc.uniqueArray(fc.integer({ min: 1, max: 149 }), { maxLength: 20 }),
      changes: fc.array(fc.tuple(fc.constantFrom('none', 'none', 'drop', 'copy'), fc.nat()), { minLength: 150, maxLength: 150 }),
    })
    .map(({ size, cuts, changes }) => {
      const ids = Array.from({ length: size }, (_, i) => `id-${String((i * 7919) % 1000).padStart(3, '0')}-${i}`);
      const bounds = [0, ...cuts.filter((c) => c < size).sort((a, b) => a - b), size];
      const chunks = bounds.slice(1).map((end, c) => ids.slice(bounds[c], end));
      const owner = (i: number) => bounds.findIndex((b, c) => i >= b && i < (bounds[c + 1] ?? 0));
      const dropped: string[] = [];
      const copied = new Map<string, string[]>();
      ids.forEach((id, i) => {
        const [change, seed] = changes[i] as [string, number];
        const from = owner(i);
        if (change === 'drop') {
          chunks[from] = (chunks[from] ?? []).filter((x) => x !== id);
          dropped.push(id);
        } else if (change === 'copy' && chunks.length > 1) {
          const to = (from + 1 + (seed % (chunks.length - 1))) % chunks.length;
          chunks[to]?.push(id);
          const key = [from, to]
            .sort((a, b) => a - b)
            .map((c) => `C${c}`)
            .join(',');
          copied.set(key, [...(copied.get(key) ?? []), id]);
        }
      });
      return { ids, chunks, dropped, copied };
    });

  it('reports every dropped id in one gap and every copied id in the overlap of its two chunks', () => {
    fc.assert(
      fc.property(injected, ({ ids, chunks, dropped, copied }) => {
        const problems = checkTiling(
          { dimension: 'ids', ids },
          chunks.map((chunk, c) => ({ id: `C${c}`, scope: { ids: chunk } })),
        );
        const gaps = problems.filter((p) => p.code === 'assignment_gap').map((p) => p.ids);
        const overlaps = new Map(problems.filter((p) => p.code === 'assignment_overlap').map((p) => [(p.subtaskIds ?? []).join(','), p.ids]));
        expect(gaps).toEqual(dropped.length === 0 ? [] : [[...dropped].sort()]);
        expect(overlaps).toEqual(new Map([...copied].map(([pair, list]) => [pair, [...list].sort()])));
        expect(problems.length).toBe(gaps.length + overlaps.size);
      }),
      RUNS,
    );
  });

  it('reports no gap exactly when the union of the chunks is the universe', () => {
    fc.assert(
      fc.property(injected, ({ ids, chunks }) => {
        const union = new Set(chunks.flat());
        const problems = checkTiling(
          { dimension: 'ids', ids },
          chunks.map((chunk, c) => ({ id: `C${c}`, scope: { ids: chunk } })),
        );
        expect(problems.some((p) => p.code === 'assignment_gap')).toBe(!ids.every((id) => union.has(id)));
      }),
      RUNS,
    );
  });

  /**
   * The definition of an exact ids tiling, written plainly: a universe without repeats, every
   * tile an ids scope, every universe id in exactly one tile and nothing else in any. A scope is
   * a set, so an id written twice in one tile is still one assignment.
   */
  const tilesExactly = (universe: readonly string[], tiles: ReadonlyArray<{ scope: Scope }>): boolean => {
    if (new Set(universe).size !== universe.length) return false;
    const counts = new Map(universe.map((id) => [id, 0]));
    for (const { scope } of tiles) {
      if (!('ids' in scope)) return false;
      for (const id of new Set(scope.ids)) {
        const count = counts.get(id);
        if (count === undefined) return false;
        counts.set(id, count + 1);
      }
    }
    return [...counts.values()].every((count) => count === 1);
  };

  type Change =
    | 'none'
    | 'repeat_in_universe'
    | 'repeat_in_both'
    | 'repeat_in_tile'
    | 'replace_with_outside'
    | 'replace_with_other'
    | 'swap_across_tiles'
    | 'reverse_tiles'
    | 'outside'
    | 'drop'
    | 'time_tile';

  /**
   * The universe cut into runs in its own order (as the planner cuts it) with at most one change:
   * some keep an exact tiling in another order, the others break it in one place. Reconcile
   * proves an in-order cut with a shortcut and anything else with the position index; both must
   * agree with the definition.
   */
  const nearlyInOrder = fc
    .record({
      ids: fc.uniqueArray(fc.string({ minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 60 }),
      cuts: fc.uniqueArray(fc.integer({ min: 1, max: 60 }), { maxLength: 8 }),
      change: fc.constantFrom<Change>(
        'none',
        'none',
        'repeat_in_universe',
        'repeat_in_both',
        'repeat_in_tile',
        'replace_with_outside',
        'replace_with_other',
        'swap_across_tiles',
        'reverse_tiles',
        'outside',
        'drop',
        'time_tile',
      ),
      seed: fc.nat(),
    })
    .map(({ ids, cuts, change, seed }) => {
      const id = ids[seed % ids.length] as string;
      const universe = [...ids];
      // A repeat the tiles are cut from too: the cut is in order, yet the id is assigned twice.
      if (change === 'repeat_in_universe' || change === 'repeat_in_both') universe.splice(seed % (ids.length + 1), 0, id);
      const source = change === 'repeat_in_both' ? universe : ids;
      const bounds = [0, ...cuts.filter((c) => c < source.length).sort((a, b) => a - b), source.length];
      const chunks = bounds.slice(1).map((end, c) => source.slice(bounds[c], end));
      const chunk = chunks[seed % chunks.length] as string[];
      const k = seed % chunk.length;
      const tiles: Array<{ id: string; scope: Scope }> = chunks.map((list, c) => ({ id: `C${c}`, scope: { ids: list } }));
      if (change === 'repeat_in_tile') chunk.push(chunk[0] as string);
      else if (change === 'replace_with_outside') chunk[k] = `${chunk[k] as string}~outside`;
      else if (change === 'replace_with_other') chunk[k] = ids[(seed + 1) % ids.length] as string;
      else if (change === 'swap_across_tiles' && chunks.length > 1) {
        const [first, last] = [chunks[0] as string[], chunks[chunks.length - 1] as string[]];
        [first[0], last[0]] = [last[0] as string, first[0] as string];
      } else if (change === 'reverse_tiles') tiles.reverse();
      else if (change === 'outside') chunk.splice(seed % (chunk.length + 1), 0, `${id}~outside`);
      else if (change === 'drop' && chunk.length > 1) chunk.splice(k, 1);
      else if (change === 'time_tile') tiles.push({ id: 'T', scope: { from: '2025-01-01', toExclusive: '2025-01-02' } });
      return { universe, tiles };
    });

  it('finds no problem exactly when the tiles assign every universe id once, in order or not', () => {
    fc.assert(
      fc.property(nearlyInOrder, ({ universe, tiles }) => {
        const problems = checkTiling({ dimension: 'ids', ids: universe }, tiles);
        expect(problems.length === 0).toBe(tilesExactly(universe, tiles));
      }),
      RUNS,
    );
  });

  it('passes every tiling the planner generates, in parts or in chunks', () => {
    const universeIds = fc.uniqueArray(fc.string({ minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 120 });
    const split = fc.oneof(
      fc.integer({ min: 1, max: 120 }).map((parts) => ({ parts })),
      fc.integer({ min: 1, max: 50 }).map((chunkSize) => ({ chunkSize })),
    );
    fc.assert(
      fc.property(universeIds, split, (ids, how) => {
        const spec = 'parts' in how ? { parts: Math.min(how.parts, ids.length) } : how;
        const result = validateRunRequest(
          {
            goal: 'property',
            universe: { dimension: 'ids', ids },
            split: { worker: 'ticket-triage', deadlineSeconds: 10, budget: { modelCalls: 1, estimatedCostPerCall: 1 }, ...spec },
            budget: { modelCalls: 1, costLimit: 1 },
          },
          testCatalog,
          PLAN_OPTIONS,
        );
        if (!result.ok) throw new Error(JSON.stringify(result.problems));
        expect(result.subtasks.flatMap((s) => ('ids' in s.assigned ? s.assigned.ids : []))).toEqual(ids);
        expect(
          checkTiling(
            { dimension: 'ids', ids },
            result.subtasks.map((s) => ({ id: s.id, scope: s.assigned })),
          ),
        ).toEqual([]);
      }),
      RUNS,
    );
  });
});
