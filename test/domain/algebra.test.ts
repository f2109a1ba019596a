import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  algebraFor,
  END_OF_FILE,
  idsAlgebra,
  intersectSets,
  intervalSet,
  pathsAlgebra,
  setsEqual,
  subtractSets,
  unionSets,
  countOf,
  listSome,
  numberWord,
  plural,
  singular,
} from '../../lib/domain';

describe('interval sets', () => {
  it('merges overlapping and touching intervals and drops empty ones', () => {
    expect(
      intervalSet([
        [5, 8],
        [1, 3],
        [3, 4],
        [9, 9],
        [7, 10],
      ]),
    ).toEqual([1, 4, 5, 10]);
  });

  it('unions, intersects and subtracts, with Infinity as an open end', () => {
    expect(unionSets([1, 3, 6, 8], [2, 7])).toEqual([1, 8]);
    expect(intersectSets([1, 5, 7, Infinity], [4, 9])).toEqual([4, 5, 7, 9]);
    expect(subtractSets([1, Infinity], [1, 121])).toEqual([121, Infinity]);
    expect(subtractSets([1, 10], [1, 10])).toEqual([]);
  });

  it('satisfies the set laws on random sets: (a − b) ∪ (a ∩ b) = a and (a − b) ∩ b = ∅', () => {
    const set = fc
      .array(fc.tuple(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 1, max: 10 })), { maxLength: 8 })
      .map((pairs) => intervalSet(pairs.map(([s, l]) => [s, s + l])));
    fc.assert(
      fc.property(set, set, (a, b) => {
        expect(setsEqual(unionSets(subtractSets(a, b), intersectSets(a, b)), a)).toBe(true);
        expect(intersectSets(subtractSets(a, b), b)).toEqual([]);
        expect(setsEqual(unionSets(a, b), unionSets(b, a))).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('ids algebra', () => {
  const ids = (...values: string[]) => idsAlgebra.normalise({ ids: values });

  it('works on sorted unique ids and writes one ids scope back', () => {
    expect(ids('t-3', 't-1', 't-3')).toEqual(['t-1', 't-3']);
    expect(idsAlgebra.toScopes(idsAlgebra.union(ids('b'), ids('a', 'c')))).toEqual([{ ids: ['a', 'b', 'c'] }]);
    expect(idsAlgebra.difference(ids('a', 'b', 'c'), ids('b', 'z'))).toEqual(['a', 'c']);
    expect(idsAlgebra.intersect(ids('a', 'b'), ids('b', 'c'))).toEqual(['b']);
    expect([idsAlgebra.overlaps(ids('a'), ids('b')), idsAlgebra.isEmpty(ids())]).toEqual([false, true]);
  });

  it('splits into near-equal parts and describes ids for people and for messages', () => {
    expect(idsAlgebra.split(ids('a', 'b', 'c', 'd', 'e'), 2)).toEqual([
      ['a', 'b'],
      ['c', 'd', 'e'],
    ]);
    expect(idsAlgebra.describe(ids('t-1', 't-2'))).toBe('ids t-1 and t-2');
    expect(idsAlgebra.describe(ids('a', 'b', 'c', 'd', 'e', 'f', 'g'))).toBe('ids a, b, c, d, e and two more');
    expect(idsAlgebra.describe(ids(...Array.from({ length: 12 }, (_, i) => `x${String(i).padStart(2, '0')}`)), 'exact')).toBe(
      'x00, x01, x02, x03, x04, x05, x06, x07, x08, x09 (+2 more)',
    );
  });
});

describe('ids algebra against plain sets', () => {
  // Sizes from 0 to 300 against 0 to 3: the lopsided pairs take the binary-search path, the even ones the merge walk.
  const idsOf = (max: number) => fc.array(fc.constantFrom(...Array.from({ length: 400 }, (_, i) => `id-${i}`), 'a', 'é', 'Z'), { maxLength: max });
  const pair = fc.oneof(fc.tuple(idsOf(300), idsOf(3)), fc.tuple(idsOf(3), idsOf(300)), fc.tuple(idsOf(40), idsOf(40)));
  const sorted = (values: Iterable<string>) => [...new Set(values)].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));

  it('intersects, subtracts and tests overlap exactly as a Set does, whatever the sizes', () => {
    fc.assert(
      fc.property(pair, ([left, right]) => {
        const [a, b] = [idsAlgebra.normalise({ ids: left }), idsAlgebra.normalise({ ids: right })];
        const inB = new Set(right);
        const both = sorted(left.filter((id) => inB.has(id)));
        expect(idsAlgebra.intersect(a, b)).toEqual(both);
        expect(idsAlgebra.intersect(b, a)).toEqual(both);
        expect(idsAlgebra.difference(a, b)).toEqual(sorted(left.filter((id) => !inB.has(id))));
        expect(idsAlgebra.overlaps(a, b)).toBe(both.length > 0);
        expect(idsAlgebra.overlaps(b, a)).toBe(both.length > 0);
      }),
      { numRuns: 300 },
    );
  });
});

describe('paths algebra', () => {
  const files = (...list: { path: string; lines?: [number, number][] }[]) => pathsAlgebra.normalise({ files: list });

  it('keeps inclusive line ranges, merges touching ones and treats no lines as the whole file', () => {
    expect(
      pathsAlgebra.toScopes(
        files(
          {
            path: 'b.ts',
            lines: [
              [10, 20],
              [21, 30],
            ],
          },
          { path: 'a.ts' },
          { path: 'b.ts', lines: [[1, 5]] },
        ),
      ),
    ).toEqual([
      {
        files: [
          { path: 'a.ts' },
          {
            path: 'b.ts',
            lines: [
              [1, 5],
              [10, 30],
            ],
          },
        ],
      },
    ]);
  });

  it('leaves the tail of a whole file after the last inspected line, up to END_OF_FILE', () => {
    const gap = pathsAlgebra.difference(files({ path: 'a.ts' }), files({ path: 'a.ts', lines: [[1, 120]] }));
    expect(pathsAlgebra.toScopes(gap)).toEqual([{ files: [{ path: 'a.ts', lines: [[121, END_OF_FILE]] }] }]);
    expect(pathsAlgebra.describe(gap)).toBe('a.ts lines 121-end');
    expect(pathsAlgebra.equals(pathsAlgebra.normalise({ files: [{ path: 'a.ts', lines: [[121, END_OF_FILE]] }] }), gap)).toBe(true);
  });

  it('covers a whole-file assignment only with a whole-file observation', () => {
    expect(pathsAlgebra.isEmpty(pathsAlgebra.difference(files({ path: 'a.ts' }), files({ path: 'a.ts' })))).toBe(true);
    expect(pathsAlgebra.isEmpty(pathsAlgebra.difference(files({ path: 'a.ts' }), files({ path: 'a.ts', lines: [[1, 1_000_000]] })))).toBe(false);
  });

  it('rejects a line range whose first line is after its last, naming it', () => {
    expect(() =>
      files({
        path: 'a.ts',
        lines: [
          [1, 5],
          [9, 3],
        ],
      }),
    ).toThrow('files.0.lines.1 must be whole line numbers [first, last] with 1 <= first <= last (got [9,3])');
  });

  it('splits whole files into groups and describes single lines and ranges', () => {
    expect(pathsAlgebra.split(files({ path: 'a.ts' }, { path: 'b.ts' }, { path: 'c.ts' }), 2).map((part) => [...part.keys()])).toEqual([
      ['a.ts'],
      ['b.ts', 'c.ts'],
    ]);
    expect(
      pathsAlgebra.describe(
        files(
          { path: 'a.ts', lines: [[7, 7]] },
          {
            path: 'b.ts',
            lines: [
              [1, 3],
              [9, 9],
            ],
          },
        ),
      ),
    ).toBe('a.ts line 7 and b.ts lines 1-3, 9');
  });
});

describe('algebraFor', () => {
  it('returns the algebra of each dimension', () => {
    expect((['time', 'ids', 'paths'] as const).map((d) => algebraFor(d).dimension)).toEqual(['time', 'ids', 'paths']);
  });
});

describe('words for statements', () => {
  it('spells out zero to twelve and groups larger numbers', () => {
    expect([0, 4, 12, 13, 12500, 1000000].map(numberWord)).toEqual(['zero', 'four', 'twelve', '13', '12,500', '1,000,000']);
  });

  it('agrees nouns with counts', () => {
    expect([countOf(0, 'transactions'), countOf(1, 'transactions'), countOf(1, 'entries'), countOf(2, 'boxes')]).toEqual([
      'zero transactions',
      'one transaction',
      'one entry',
      'two boxes',
    ]);
    expect([plural('ticket'), plural('entry'), plural('box'), singular('notes'), singular('news')]).toEqual(['tickets', 'entries', 'boxes', 'note', 'news']);
    expect(listSome(['a', 'b', 'c', 'd'], 2)).toBe('a, b and two more');
  });
});
