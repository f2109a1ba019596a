import { z } from 'zod';
import { MAX_YEAR, parseTimePoint, yearInOffset } from './calendar';
import { PlainText } from './text';

/**
 * A point in time: an ISO date (`2025-04-01`, taken as 00:00 UTC) or an ISO instant with an
 * explicit offset (`2025-04-01T00:00:00+02:00`). Impossible calendar dates are rejected.
 */
export const TimePoint = z
  .string()
  .refine((v) => parseTimePoint(v) !== undefined, {
    message: 'must be an ISO date (YYYY-MM-DD) or an ISO instant with an offset, on a real calendar day',
  })
  .meta({
    description: 'An ISO date (taken as 00:00 UTC) or an ISO instant with an explicit offset, on a real calendar day.',
    examples: ['2025-04-01', '2025-04-01T00:00:00+02:00'],
  });
export type TimePoint = z.infer<typeof TimePoint>;

/** Half-open time range `[from, toExclusive)`. Both ends use the same form. */
export const TimeRange = z
  .object({
    from: TimePoint.describe('The first point of the range (inclusive).'),
    toExclusive: TimePoint.describe('The end of the range (exclusive), in the same form as from.'),
  })
  .superRefine((range, ctx) => {
    const from = parseTimePoint(range.from);
    const to = parseTimePoint(range.toExclusive);
    if (!from || !to) return;
    if (from.form !== to.form) {
      ctx.addIssue({ code: 'custom', path: ['toExclusive'], message: 'must use the same form as from (both dates or both instants)' });
    } else if (from.ms >= to.ms) {
      ctx.addIssue({ code: 'custom', path: ['toExclusive'], message: `must be after from (${range.from})` });
    } else if (yearInOffset(to.ms, from.offsetMinutes) > MAX_YEAR) {
      // Every point of a range is written in the offset of `from` (split pieces, gaps, coverage),
      // so that end must still have a four-digit year there.
      ctx.addIssue({
        code: 'custom',
        path: ['toExclusive'],
        message: `is after ${MAX_YEAR}-12-31 in the offset of from (${range.from}); points of a range are written in that offset with four-digit years`,
      });
    }
  })
  .describe('A half-open time range [from, toExclusive).');
export type TimeRange = z.infer<typeof TimeRange>;

/** A stable identifier: tickets, sources, SKUs, accounts. */
export const ItemId = PlainText.min(1).max(256).describe('A stable identifier (a ticket, a source, a SKU), 1-256 characters.');

/** A set of IDs. Inside a scope the order carries no meaning. */
export const IdsScope = z.object({ ids: z.array(ItemId).min(1).describe('The ids; their order carries no meaning.') }).describe('A set of ids.');
export type IdsScope = z.infer<typeof IdsScope>;

/**
 * An inclusive, 1-based line range `[first, last]`, as editors and `#L1-L120` links number lines.
 * Inclusive ranges were chosen over half-open ones because reviewers and tools quote lines that way.
 */
export const LineRange = z
  .tuple([z.int().min(1), z.int().min(1)])
  .refine(([first, last]) => first <= last, { message: 'first line must not be after last line' })
  .describe('An inclusive, 1-based line range [first, last].');
export type LineRange = z.infer<typeof LineRange>;

/** A file path in its one written form, or why it has none. */
export type NormalizedPath = { readonly ok: true; readonly path: string } | { readonly ok: false; readonly problem: string };

/**
 * The one form of a file path that scopes are compared in, so that `src/a.ts`, `./src/a.ts` and
 * `src//a.ts` are one file: `/`-separated segments with the empty and `.` segments dropped (a
 * trailing `/` too). A path is refused when it is absolute (it starts with `/`), has a `..`
 * segment (it could name a file outside the tree the kind reads, or the same file twice), or is
 * empty once normalized (`.`, `./`). `\` is an ordinary character, not a separator.
 *
 * @example
 * normalizeFilePath('./src//a.ts') // { ok: true, path: 'src/a.ts' }
 * normalizeFilePath('src/../etc/passwd').ok // false
 */
export const normalizeFilePath = (path: string): NormalizedPath => {
  if (path.startsWith('/')) return { ok: false, problem: 'must be a relative path: an absolute path (one starting with /) is refused' };
  const segments = path.split('/');
  if (segments.includes('..'))
    return { ok: false, problem: 'must not contain a .. segment: a path names a file inside the tree the worker reads, in one way only' };
  const kept = segments.filter((segment) => segment !== '' && segment !== '.');
  if (kept.length === 0) return { ok: false, problem: 'must name a file: it is empty once its . segments and extra slashes are removed' };
  return { ok: true, path: kept.join('/') };
};

/**
 * A file path of a scope: refused as {@link normalizeFilePath} refuses it, else replaced by its
 * normalized form, so everything past parsing (tiling, the manifest, a kind's `load`) sees one form.
 */
export const FilePath = PlainText.min(1)
  .max(1024)
  .superRefine((path, ctx) => {
    const normalized = normalizeFilePath(path);
    if (!normalized.ok) ctx.addIssue({ code: 'custom', message: normalized.problem });
  })
  .overwrite((path) => {
    const normalized = normalizeFilePath(path);
    return normalized.ok ? normalized.path : path;
  });

/** One file; without `lines` the whole file is meant. */
export const FileScope = z
  .object({
    path: FilePath.describe('The file path, 1-1024 characters, relative, without `..`; normalized (`./src//a.ts` is `src/a.ts`).'),
    lines: z.array(LineRange).min(1).optional().describe('The line ranges meant; without them, the whole file.'),
  })
  .describe('One file, or line ranges of it.');
export type FileScope = z.infer<typeof FileScope>;

export const PathsScope = z.object({ files: z.array(FileScope).min(1).describe('The files.') }).describe('A set of files and line ranges.');
export type PathsScope = z.infer<typeof PathsScope>;

/** The scope of one subtask. Its dimension is the dimension of the run's universe. */
export const Scope = z.union([TimeRange, IdsScope, PathsScope]);
export type Scope = z.infer<typeof Scope>;

export const Dimension = z.enum(['time', 'ids', 'paths']).describe('How the universe is measured: a time range, a set of ids, or files and lines.');
export type Dimension = z.infer<typeof Dimension>;

export const TimeUniverse = TimeRange.safeExtend({
  dimension: z.literal('time').describe('A time range.'),
  /** Name of the record field the range applies to, for reports (`postedDate`). */
  field: PlainText.min(1).max(64).optional().describe('The record field the range applies to, for reports (postedDate).'),
});
export const IdsUniverse = IdsScope.extend({
  dimension: z.literal('ids').describe('A set of ids.'),
  /** What one ID names, for reports (`ticket`). */
  noun: PlainText.min(1).max(32).optional().describe('What one id names, for reports (ticket).'),
});
export const PathsUniverse = PathsScope.extend({ dimension: z.literal('paths').describe('Files and line ranges.') });

/** The whole of the work: the subtasks must tile it with no gaps and no overlaps. */
export const Universe = z
  .discriminatedUnion('dimension', [TimeUniverse, IdsUniverse, PathsUniverse])
  .describe('The whole of the work: the subtasks must tile it with no gaps and no overlaps.');
export type Universe = z.infer<typeof Universe>;
export type TimeUniverse = z.infer<typeof TimeUniverse>;
export type IdsUniverse = z.infer<typeof IdsUniverse>;
export type PathsUniverse = z.infer<typeof PathsUniverse>;
