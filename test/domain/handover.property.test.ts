import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Checkpoint, Dimension, DispatchedSubtask, Scope } from '../../lib/contract';
import { handoverLine, hedgeCopies, hedgeCut } from '../../lib/domain';
import { unitsOf as unitsOfScope, unitsOfAll as unitsOfScopes } from './support/scope-units';

/**
 * Properties of a hedge handover in all three dimensions: an original's checkpoint covers a
 * random prefix of its scope (with or without partial findings), and `hedgeCut` cuts the
 * `subdivide` pieces. Expected values are sets of units (day numbers, ids, `file:line` keys)
 * computed here, never with the domain's algebra: prefix ∪ pieces = scope, prefix ∩ pieces = ∅,
 * the pieces pairwise disjoint, and a handover exactly when the checkpoint has partial findings
 * over a non-empty prefix and the rest can still be cut into `copies` non-empty pieces.
 */
const RUNS = { numRuns: 300 };
const DAY = 86_400_000;
const LINES = 10;

/** A file without line ranges stands for its lines 1..LINES here. */
const unitsOf = (scope: Scope): Set<string> => unitsOfScope(scope, LINES);
const unitsOfAll = (scopes: readonly Scope[]): Set<string> => unitsOfScopes(scopes, LINES);
const day = (n: number): string => new Date(Date.UTC(2025, 0, 1) + n * DAY).toISOString().slice(0, 10);
const id = (k: number): string => `id-${String(k).padStart(3, '0')}`;
const file = (k: number): string => `src/f${String(k).padStart(2, '0')}.ts`;

/** A random case: the scope of `size` units, the region the checkpoint's findings rest on, and how many units of the rest a cut can use. */
interface Case {
  readonly scope: Scope;
  readonly prefix: Scope[];
  /** Days, ids or files the rest has: the splitters cut whole days, ids and files. */
  readonly restParts: number;
}

const timeCase = fc.record({ size: fc.integer({ min: 2, max: 60 }), read: fc.nat() }).map(({ size, read }): Case => {
  // A time prefix is read from the scope's start (the rest must be one range).
  const p = read % (size + 1);
  return { scope: { from: day(0), toExclusive: day(size) }, prefix: p === 0 ? [] : [{ from: day(0), toExclusive: day(p) }], restParts: size - p };
});

const idsCase = fc
  .record({ size: fc.integer({ min: 2, max: 40 }), picks: fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }) })
  .map(({ size, picks }): Case => {
    // Any subset of ids can be the prefix: the rest is one id set.
    const ids = Array.from({ length: size }, (_, k) => id(k));
    const read = ids.filter((_, k) => picks[k] === true);
    return { scope: { ids }, prefix: read.length === 0 ? [] : [{ ids: read }], restParts: size - read.length };
  });

const pathsCase = fc
  .record({ size: fc.integer({ min: 2, max: 12 }), whole: fc.nat(), lines: fc.integer({ min: 0, max: LINES - 1 }) })
  .map(({ size, whole, lines }): Case => {
    // The first `w` files read whole, and the first `lines` lines of the next one.
    const w = whole % (size + 1);
    const files = Array.from({ length: size }, (_, k) => ({ path: file(k), lines: [[1, LINES]] as [number, number][] }));
    const read = [...files.slice(0, w), ...(w < size && lines > 0 ? [{ path: file(w), lines: [[1, lines]] as [number, number][] }] : [])];
    return { scope: { files }, prefix: read.length === 0 ? [] : [{ files: read }], restParts: size - w };
  });

const CASES: Record<Dimension, fc.Arbitrary<Case>> = { time: timeCase, ids: idsCase, paths: pathsCase };

const checkpointOver = (prefix: Scope[], partial: boolean): Pick<Checkpoint, 'partial'> =>
  partial ? { partial: { covered: prefix, observed: { ids: [], recordCount: 0 }, findings: { records: 0 } } } : {};

const subtaskOf = (scope: Scope, copies: number): DispatchedSubtask => ({
  id: 'X',
  worker: 'w',
  round: 1,
  questionIds: [],
  required: false,
  assigned: scope,
  hedge: { afterSeconds: 5, mode: 'subdivide', copies },
});

describe.each(['time', 'ids', 'paths'] as const)('hedge handover in %s', (dimension) => {
  it('prefix ∪ pieces = scope and prefix ∩ pieces = ∅; a handover exactly when findings rest on a prefix and the rest can be cut', () => {
    fc.assert(
      fc.property(CASES[dimension], fc.integer({ min: 2, max: 8 }), fc.boolean(), (c, copies, partial) => {
        const scopeUnits = unitsOf(c.scope);
        const wholeParts = dimension === 'paths' && 'files' in c.scope ? c.scope.files.length : scopeUnits.size;
        fc.pre(wholeParts >= copies);
        const cut = hedgeCut(c.scope, copies, checkpointOver(c.prefix, partial));
        const handsOver = partial && c.prefix.length > 0 && c.restParts >= copies;
        expect(cut.prefix !== undefined).toBe(handsOver);
        const prefixUnits = unitsOfAll(cut.prefix ?? []);
        if (handsOver) expect(prefixUnits).toEqual(unitsOfAll(c.prefix));
        // The pieces: `copies` of them, non-empty, pairwise disjoint, none in the prefix, and with it the whole scope.
        expect(cut.pieces).toHaveLength(copies);
        const seen = new Set<string>(prefixUnits);
        for (const piece of cut.pieces) {
          const units = unitsOf(piece);
          expect(units.size).toBeGreaterThan(0);
          for (const unit of units) {
            expect(seen.has(unit)).toBe(false);
            seen.add(unit);
          }
        }
        expect(seen).toEqual(scopeUnits);
      }),
      RUNS,
    );
  });

  it("reconcile's proof accepts prefix + the pieces cut, and refuses the whole-scope pieces over a prefix (an overlap) or a missing piece (a gap)", () => {
    fc.assert(
      fc.property(CASES[dimension], fc.integer({ min: 2, max: 8 }), (c, copies) => {
        fc.pre(c.prefix.length > 0 && c.restParts >= copies);
        const subtask = subtaskOf(c.scope, copies);
        const checkpoint = checkpointOver(c.prefix, true);
        const pieces = hedgeCopies(subtask, checkpoint);
        expect(pieces.every((p) => p.lineage?.kind === 'hedge' && p.lineage.prefix !== undefined)).toBe(true);
        const tiles = pieces.map((p) => ({ id: p.id, scope: p.assigned }));
        expect(handoverLine(subtask, checkpoint, tiles)?.problems).toEqual([]);
        const whole = hedgeCopies(subtask).map((p) => ({ id: p.id, scope: p.assigned }));
        expect(handoverLine(subtask, checkpoint, whole)?.problems.map((p) => p.code)).toContain('assignment_overlap');
        expect(handoverLine(subtask, checkpoint, tiles.slice(1))?.problems.map((p) => p.code)).toContain('assignment_gap');
      }),
      RUNS,
    );
  });
});
