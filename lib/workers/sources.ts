import type { z } from 'zod';
import { LineRange, normalizeFilePath, parseTimePoint, TimeRange, type Dimension, type FileScope, type ParsedTimePoint, type Scope } from '../contract';
import type { ScopeByDimension } from './assignment';
import { ScopeViolation, SourceDataError } from './errors';
import { mergeRanges, type RecorderByDimension } from './observation';
import { toolSpec, type ToolSpec } from './model';

/**
 * Data sources a worker kind declares, and the scoped tools the SDK builds from them.
 *
 * A kind says where its data comes from (`load`); the SDK wraps that loader in a tool that
 * 1. refuses any request outside the assignment with a `ScopeViolation`, recorded as a refusal;
 * 2. races the loader against the subtask's signal, so a slow source cannot outlive the deadline;
 * 3. keeps only what lies inside the request and records it: the observed block is built here,
 *    from the records returned, and nowhere else.
 */

/**
 * Records one source returned; `source` names it in the outcome's `sources` (`stmt-2025-06`).
 *
 * @example
 * const batch: SourceBatch<Txn> = { source: 'stmt-2025-06', rows: june.transactions };
 */
export interface SourceBatch<Row> {
  readonly source: string;
  readonly rows: readonly Row[];
}

/**
 * @example
 * load: async (range, { signal }) => (await fetch(url(range), { signal })).json()
 */
export interface LoadOptions {
  /** Fires at the deadline or on cancellation. Long loads should pass it on (fetch, SDK calls, timers). */
  readonly signal: AbortSignal;
}

/**
 * What the SDK hands a source when it builds the tool for one subtask run.
 *
 * @example
 * bind: (binding) => async (id) => { if (!binding.scope.ids.includes(id)) throw binding.refuse(id, 'not assigned'); … }
 */
export interface ToolBinding<D extends Dimension> {
  /** The tool's name: the key under which the kind declared the source. */
  readonly tool: string;
  readonly scope: Readonly<ScopeByDimension[D]>;
  /** The assignment's validated input (the inquiry). */
  readonly input: unknown;
  readonly recorder: RecorderByDimension[D];
  readonly signal: AbortSignal;
  reach(source: string): void;
  /** Records a refusal and returns the error the tool throws. */
  refuse(requested: string, reason: string): ScopeViolation;
  /** Runs `work` unless the subtask has stopped, and rejects as soon as it stops. */
  guard<T>(work: () => Promise<T>): Promise<T>;
  /**
   * The tool answered a request for `scope` in full (a whole requested range, an id, lines): the
   * checkpoint's covered region. A custom source that never calls it checkpoints no coverage, so
   * no prefix of its reads is ever counted.
   */
  cover(scope: Scope): void;
}

/**
 * A declared data source of dimension `D` that becomes a tool of type `Tool`.
 *
 * @example
 * const custom: DataSource<'ids', (id: string) => Promise<string[]>> = { dimension: 'ids', description: '…', bind: (binding) => … };
 */
export interface DataSource<D extends Dimension, Tool> {
  readonly dimension: D;
  readonly description: string;
  bind(binding: ToolBinding<D>): Tool;
}

/**
 * Keys of `Row` whose values are strings.
 *
 * @example
 * const field: StringKey<{ id: string; amountPence: number }> = 'id'; // 'amountPence' is not a string field
 */
export type StringKey<Row> = { [K in keyof Row]-?: Row[K] extends string ? K : never }[keyof Row] & string;

/**
 * A short, payload-free description of a request for the refusal record.
 *
 * @example
 * describeRequest({ sku: 'SKU-VANILLA', guests: 42 }) // '{"sku":"SKU-VANILLA","guests":42}'
 */
export const describeRequest = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
};

const issuesOf = (error: z.ZodError): string => error.issues.map((issue) => `${issue.path.join('.') || '(root)'} ${issue.message}`).join('; ');

// ---------------------------------------------------------------- time series

/**
 * @example
 * await ctx.tools.statements({ from: '2025-04-01', toExclusive: '2025-05-01' }); // April only
 */
export interface TimeRangeRequest {
  readonly from: string;
  readonly toExclusive: string;
}

/**
 * Returns the records inside `range` (default: the whole assignment).
 *
 * @example
 * const rows = await ctx.tools.statements(); // the whole assignment
 */
export type TimeSeriesTool<Row> = (range?: TimeRangeRequest) => Promise<readonly Row[]>;

/**
 * @example
 * timeSeriesSource<Txn>({ description: 'Statements', dateField: 'postedDate', idField: 'id', load });
 */
export interface TimeSeriesSpec<Row> {
  readonly description: string;
  /** The record field holding its date or instant: observed `minDate`/`maxDate` come from it. */
  readonly dateField: StringKey<Row>;
  /** The record field that identifies it, so a record fetched twice is counted once. */
  readonly idField: StringKey<Row>;
  /** Fetches the batches that overlap `range`. They may hold records outside it: the tool drops those. */
  load(range: TimeRangeRequest, options: LoadOptions): Promise<readonly SourceBatch<Row>[]>;
}

const describeRange = (range: TimeRangeRequest): string => `${range.from}..${range.toExclusive}`;

const requestedBounds = (binding: ToolBinding<'time'>, range: TimeRangeRequest): { from: number; to: number } => {
  const parsed = TimeRange.safeParse(range);
  if (!parsed.success) throw binding.refuse(describeRequest(range), `not a valid time range: ${issuesOf(parsed.error)}`);
  const [from, to] = [parseTimePoint(range.from), parseTimePoint(range.toExclusive)];
  const [assignedFrom, assignedTo] = [parseTimePoint(binding.scope.from), parseTimePoint(binding.scope.toExclusive)];
  if (!from || !to || !assignedFrom || !assignedTo) throw binding.refuse(describeRange(range), 'not a valid time range');
  if (from.ms < assignedFrom.ms || to.ms > assignedTo.ms) {
    throw binding.refuse(describeRange(range), `outside the assignment ${describeRange(binding.scope)}`);
  }
  return { from: from.ms, to: to.ms };
};

/** Writes an observed date in the assignment's form, so reconcile compares like with like. */
const inAssignedForm = (point: ParsedTimePoint, written: string, assignedForm: ParsedTimePoint['form']): string => {
  if (point.form === assignedForm) return written;
  const iso = new Date(point.ms).toISOString();
  return assignedForm === 'date' ? iso.slice(0, 10) : iso;
};

/**
 * A time-series source: records with a date field, fetched in batches (monthly statements, feed
 * pages). Its tool refuses ranges outside the assigned `[from, toExclusive)`, returns only the
 * records inside the requested range and records their min/max date and count.
 *
 * @example
 * const statements = timeSeriesSource<Txn>({
 *   description: 'Monthly bank statements',
 *   dateField: 'postedDate', idField: 'id',
 *   load: async (range, { signal }) => fetchStatements(range, signal),
 * });
 * // in run(ctx): const rows = await ctx.tools.statements();
 */
export const timeSeriesSource = <Row extends object>(spec: TimeSeriesSpec<Row>): DataSource<'time', TimeSeriesTool<Row>> => ({
  dimension: 'time',
  description: spec.description,
  bind: (binding) => async (requested) => {
    const range = requested ?? binding.scope;
    const bounds = requestedBounds(binding, range);
    const request = { from: range.from, toExclusive: range.toExclusive };
    const batches = await binding.guard(() => spec.load(request, { signal: binding.signal }));
    const assignedForm = parseTimePoint(binding.scope.from)?.form ?? 'date';
    const kept: { row: Row; point: ParsedTimePoint; written: string }[] = [];
    for (const batch of batches) {
      for (const row of batch.rows) {
        const written = row[spec.dateField] as string;
        const point = parseTimePoint(written);
        if (!point) throw new SourceDataError(binding.tool, batch.source, `${spec.dateField} "${written}" is not an ISO date or instant`);
        if (point.ms >= bounds.from && point.ms < bounds.to) kept.push({ row, point, written });
      }
    }
    // Recorded only once every record parsed: a call that throws returns nothing, so covers nothing.
    for (const batch of batches) binding.reach(batch.source);
    for (const { row, point, written } of kept) binding.recorder.record(row[spec.idField] as string, point.ms, inAssignedForm(point, written, assignedForm));
    binding.cover(request);
    return kept.map(({ row }) => row);
  },
});

// ---------------------------------------------------------------- keyed records (ids)

/**
 * Takes the model's (or the worker's) arguments as they come: the tool parses them itself.
 *
 * @example
 * const reply = await ctx.model.call({ messages, tools: [ctx.tools.catering_quote.spec] });
 * const rows = await ctx.tools.catering_quote(reply.toolCalls[0]?.input);
 */
export type KeyedTool<Row> = ((args: unknown) => Promise<readonly Row[]>) & {
  /** The tool's description for a model's tool list. */
  readonly spec: ToolSpec;
};

/**
 * @example
 * keyedSource({ description: 'One source', args: z.object({ sourceId: z.string() }), idOf: (a) => a.sourceId, load });
 */
export interface KeyedSpec<Args, Row> {
  readonly description: string;
  /** Schema of the tool's arguments; also advertised to models as the tool's input schema. */
  readonly args: z.ZodType<Args>;
  /** Which assigned id a request is about (`sourceId`, `sku`). */
  idOf(args: Args): string;
  /**
   * The request must equal the assignment's input exactly (the catering example's inquiry): a model asking
   * for another guest count is refused even though its arguments pass the schema.
   */
  readonly requireInput?: boolean;
  load(args: Args, options: LoadOptions): Promise<SourceBatch<Row>>;
}

/**
 * Compares two JSON values; key order does not matter.
 *
 * @example
 * sameJson({ sku: 'A', guests: 41 }, { guests: 41, sku: 'A' }) // true
 */
export const sameJson = (a: unknown, b: unknown): boolean => {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const [keysA, keysB] = [Object.keys(a), Object.keys(b)];
  if (keysA.length !== keysB.length) return false;
  return keysA.every((key) => sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
};

const checkKeyedRequest = <Args>(binding: ToolBinding<'ids'>, assigned: ReadonlySet<string>, spec: KeyedSpec<Args, unknown>, raw: unknown): Args => {
  const requested = describeRequest(raw);
  const parsed = spec.args.safeParse(raw);
  if (!parsed.success) throw binding.refuse(requested, `arguments do not match the tool: ${issuesOf(parsed.error)}`);
  const id = spec.idOf(parsed.data);
  if (!assigned.has(id)) throw binding.refuse(requested, `${id} is not assigned (assigned: ${binding.scope.ids.join(', ')})`);
  if (spec.requireInput && !sameJson(parsed.data, binding.input)) {
    throw binding.refuse(requested, `only the assigned inquiry ${describeRequest(binding.input)} may be requested`);
  }
  return parsed.data;
};

/**
 * A keyed source: records looked up by an assigned id (a research source, a ticket, a SKU).
 * Its tool refuses ids that were not assigned and, with `requireInput`, any request that is
 * not exactly the assignment's inquiry; it records the id with the number of records it yielded.
 *
 * @example
 * const quotes = keyedSource({
 *   description: 'Draft quote for the assigned inquiry',
 *   args: CateringInquiry, idOf: (inquiry) => inquiry.sku, requireInput: true,
 *   load: async (inquiry) => ({ source: 'catalogue', rows: [quote(inquiry)] }),
 * });
 */
export const keyedSource = <Args, Row>(spec: KeyedSpec<Args, Row>): DataSource<'ids', KeyedTool<Row>> => ({
  dimension: 'ids',
  description: spec.description,
  bind: (binding) => {
    // A set, not the list: a worker assigned 50,000 ids looks each one up once per request.
    const assigned = new Set(binding.scope.ids);
    const call = async (raw: unknown): Promise<readonly Row[]> => {
      const args = checkKeyedRequest(binding, assigned, spec, raw);
      const batch = await binding.guard(() => spec.load(args, { signal: binding.signal }));
      binding.reach(batch.source);
      binding.recorder.record(spec.idOf(args), batch.rows.length);
      binding.cover({ ids: [spec.idOf(args)] });
      return [...batch.rows];
    };
    return Object.assign(call, { spec: toolSpec(binding.tool, spec.description, spec.args) });
  },
});

// ---------------------------------------------------------------- files (paths)

/**
 * @example
 * await ctx.tools.repo({ path: 'src/a.ts', lines: [1, 120] });
 */
export interface FileRequest {
  readonly path: string;
  /** Inclusive, 1-based `[first, last]`; omit to read the whole file (only when it is assigned whole). */
  readonly lines?: LineRange;
}

/**
 * Returns the requested lines of an assigned file.
 *
 * @example
 * const lines = await ctx.tools.repo({ path: 'src/a.ts' }); // only if src/a.ts is assigned whole
 */
export type FileTool = (request: FileRequest) => Promise<readonly string[]>;

/**
 * @example
 * fileSource({ description: 'Files of the change', load: async (path, { signal }) => readLines(path, signal) });
 */
export interface FileSpec {
  readonly description: string;
  /**
   * The file's lines. `path` is always an assigned path in its normalized form
   * (`normalizeFilePath`): relative, `/`-separated, with no empty, `.` or `..` segment. It can
   * still name a symbolic link, and `\` is an ordinary character in it (docs/workers.md).
   */
  load(path: string, options: LoadOptions): Promise<readonly string[]>;
}

/**
 * Checks a request against the assignment and answers the path in its normalized form (the form
 * assignments carry): `./src/a.ts` asks for the assigned `src/a.ts`; an absolute path or one with
 * a `..` segment is refused before anything is read.
 */
const checkFileRequest = (binding: ToolBinding<'paths'>, request: FileRequest): string => {
  // The request may be a model's output passed straight in: anything but a string is refused too.
  if (typeof request.path !== 'string') throw binding.refuse(String(request.path), 'the path must be a string');
  const normalized = normalizeFilePath(request.path);
  if (!normalized.ok) throw binding.refuse(request.path, `the path ${normalized.problem}`);
  const { path } = normalized;
  const assigned: readonly FileScope[] = binding.scope.files.filter((file) => file.path === path);
  const requested = request.lines ? `${path}#L${request.lines[0]}-L${request.lines[1]}` : path;
  if (assigned.length === 0) throw binding.refuse(requested, `${path} is not assigned`);
  if (assigned.some((file) => file.lines === undefined)) return path;
  const ranges = mergeRanges(assigned.flatMap((file) => file.lines ?? []));
  const allowed = ranges.map(([first, last]) => `${first}-${last}`).join(', ');
  if (!request.lines) throw binding.refuse(requested, `only lines ${allowed} of ${path} are assigned`);
  if (!LineRange.safeParse(request.lines).success) throw binding.refuse(requested, 'not a valid line range');
  const [first, last] = request.lines;
  if (!ranges.some(([from, to]) => first >= from && last <= to)) {
    throw binding.refuse(requested, `outside the assigned lines ${allowed} of ${path}`);
  }
  return path;
};

/**
 * A file source for code review and document work. Its tool refuses files and line ranges that
 * were not assigned and records the files and inclusive line ranges it returned.
 *
 * @example
 * const repo = fileSource({ description: 'Files of the change', load: async (path) => readLines(path) });
 * // in run(ctx): const lines = await ctx.tools.repo({ path: 'src/a.ts', lines: [1, 120] });
 */
export const fileSource = (spec: FileSpec): DataSource<'paths', FileTool> => ({
  dimension: 'paths',
  description: spec.description,
  bind: (binding) => async (request) => {
    const path = checkFileRequest(binding, request);
    const lines = await binding.guard(() => spec.load(path, { signal: binding.signal }));
    binding.reach(path);
    if (!request.lines) {
      binding.recorder.recordWholeFile(path, lines.length);
      binding.cover({ files: [{ path }] });
      return [...lines];
    }
    const [first, last] = [request.lines[0], Math.min(request.lines[1], lines.length)];
    if (first > last) return [];
    binding.recorder.recordLines(path, [first, last]);
    binding.cover({ files: [{ path, lines: [[first, last]] }] });
    return lines.slice(first - 1, last);
  },
});
