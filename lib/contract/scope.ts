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

/** One file; without `lines` the whole file is meant. */
export const FileScope = z
  .object({
    path: PlainText.min(1).max(1024).describe('The file path, 1-1024 characters.'),
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
