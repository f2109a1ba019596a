import { normalizeFilePath, type FileScope, type PathsScope, type Scope } from '../contract';
import { DimensionMismatchError, ScopeError } from './errors';
import { intervalSet, intersectSets, pairsOf, setsEqual, subtractSets, unionSets, type IntervalSet } from './intervals';
import { chunkEvenly } from './ids';
import { dimensionOf, type DescribeStyle, type ScopeAlgebra } from './scope';
import { listSome } from './words';

/**
 * A `last` line meaning "through the end of the file". A whole file's length is unknown to
 * tessera, so the part of a whole-file assignment after the last inspected line can only be
 * written this way: `[121, END_OF_FILE]` reads "line 121 to the end".
 */
export const END_OF_FILE = Number.MAX_SAFE_INTEGER;

/**
 * A normalised paths region: each file (sorted by path) with its lines as a half-open interval
 * set, `[first, last + 1)`. A whole file is `[1, Infinity)`. Files with no lines are absent.
 */
export type PathSet = ReadonlyMap<string, IntervalSet>;

const WHOLE_FILE: IntervalSet = Object.freeze([1, Number.POSITIVE_INFINITY]);

const byPath = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Keeps only non-empty files, sorted by path, so equal regions compare equal. */
const tidy = (entries: Iterable<readonly [string, IntervalSet]>): PathSet =>
  new Map([...entries].filter(([, lines]) => lines.length > 0).sort(([a], [b]) => byPath(a, b)));

const readLines = (file: FileScope, field: string): IntervalSet => {
  if (!file.lines) return WHOLE_FILE;
  return intervalSet(
    file.lines.map(([first, last], k) => {
      if (!Number.isInteger(first) || !Number.isInteger(last) || first < 1 || first > last) {
        throw new ScopeError(`${field}.lines.${k}`, [first, last], 'must be whole line numbers [first, last] with 1 <= first <= last');
      }
      return [first, last === END_OF_FILE ? Number.POSITIVE_INFINITY : last + 1] as const;
    }),
  );
};

/**
 * A scope's file path in its normalized form (`normalizeFilePath`): scopes parsed by the contract
 * already carry it, and this makes the algebra agree for a scope built in code too.
 *
 * @example
 * filePath('./src//a.ts', 'files.0.path') // 'src/a.ts'
 */
export const filePath = (path: string, field: string): string => {
  const normalized = normalizeFilePath(path);
  if (!normalized.ok) throw new ScopeError(field, path, normalized.problem);
  return normalized.path;
};

/**
 * Reads a list of files into a region; a path listed twice, in any of its written forms
 * (`src/a.ts`, `./src/a.ts`), contributes the union of its lines.
 *
 * @example
 * pathSet([{ path: 'src/a.ts', lines: [[1, 120]] }]).get('src/a.ts') // [1, 121]
 */
export const pathSet = (files: readonly FileScope[]): PathSet => {
  const merged = new Map<string, IntervalSet>();
  files.forEach((file, i) => {
    const lines = readLines(file, `files.${i}`);
    const path = filePath(file.path, `files.${i}.path`);
    const before = merged.get(path);
    merged.set(path, before ? unionSets(before, lines) : lines);
  });
  return tidy(merged);
};

/**
 * Contract form of one file's lines: no `lines` for the whole file.
 *
 * @example
 * fileScope('a.ts', [121, Infinity]) // { path: 'a.ts', lines: [[121, END_OF_FILE]] }
 */
export const fileScope = (path: string, lines: IntervalSet): FileScope => {
  if (setsEqual(lines, WHOLE_FILE)) return { path };
  return { path, lines: pairsOf(lines).map(([s, e]) => [s, e === Number.POSITIVE_INFINITY ? END_OF_FILE : e - 1] as [number, number]) };
};

const perFile =
  (op: (a: IntervalSet, b: IntervalSet) => IntervalSet) =>
  (a: PathSet, b: PathSet): PathSet => {
    const paths = new Set([...a.keys(), ...b.keys()]);
    return tidy([...paths].map((path) => [path, op(a.get(path) ?? [], b.get(path) ?? [])] as const));
  };

const describeLines = (lines: IntervalSet, style: DescribeStyle): string =>
  pairsOf(lines)
    .map(([s, e]) => {
      const last = e === Number.POSITIVE_INFINITY ? 'end' : String(e - 1);
      return last === String(s) ? `${s}` : `${s}-${last}`;
    })
    .join(style === 'exact' ? ',' : ', ');

const describeFile = (path: string, lines: IntervalSet, style: DescribeStyle): string => {
  if (setsEqual(lines, WHOLE_FILE)) return path;
  const text = describeLines(lines, style);
  if (style === 'exact') return `${path}:${text}`;
  return `${path} ${lines.length === 2 && !text.includes('-') ? 'line' : 'lines'} ${text}`;
};

const asPathsScope = (scope: Scope): PathsScope => {
  if (!('files' in scope)) throw new DimensionMismatchError('paths', dimensionOf(scope));
  return scope;
};

/**
 * The paths dimension: files with optional inclusive, 1-based line ranges (no `lines` = whole
 * file). A file assigned whole is covered only by an observation of the whole file; line
 * ranges observed in it leave the rest reported up to {@link END_OF_FILE}.
 *
 * @example
 * pathsAlgebra.describe(pathsAlgebra.normalise({ files: [{ path: 'src/a.ts', lines: [[121, 200]] }] }))
 * // 'src/a.ts lines 121-200'
 */
export const pathsAlgebra: ScopeAlgebra<PathSet> = {
  dimension: 'paths',
  normalise: (scope) => pathSet(asPathsScope(scope).files),
  toScopes: (set) => (set.size === 0 ? [] : [{ files: [...set].map(([path, lines]) => fileScope(path, lines)) }]),
  split: (set, parts) => chunkEvenly([...set], parts).map((files) => new Map(files)),
  union: perFile(unionSets),
  intersect: perFile(intersectSets),
  difference: perFile(subtractSets),
  overlaps: (a, b) => perFile(intersectSets)(a, b).size > 0,
  isEmpty: (set) => set.size === 0,
  equals: (a, b) => a.size === b.size && [...a].every(([path, lines]) => setsEqual(lines, b.get(path) ?? [])),
  describe: (set, style = 'prose') => {
    if (set.size === 0) return 'no files';
    const files = [...set].map(([path, lines]) => describeFile(path, lines, style));
    return style === 'exact' ? files.join(', ') : listSome(files, 5);
  },
};
