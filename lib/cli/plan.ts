import { DEFAULT_MAX_DEADLINE_SECONDS, validateRunRequest, withModels, type WorkerCatalog } from '../domain';
import { UsageError } from './errors';
import { kindCapacity } from '../runtime/capacity';
import { formatPlan, formatProblems, formatWarnings } from './output';
import { fileArgs, readJson, type Command } from './router';
import { cliRegistry } from './workers';
import { COMMAND_HELP } from './help';

/** What the plan command checks requests against. */
export interface PlanCommandOptions {
  /**
   * The worker kinds requests may use.
   * @default - the worker module's: `--workers PATH`, else package.json's `"tessera": { "workers": PATH }`
   */
  readonly catalog?: WorkerCatalog;
  /** Model ids requests may name, applied to the worker module's catalog (`withModels`). @default - the catalog's own */
  readonly models?: readonly string[];
  /** Default horizon for `deadlineSeconds`; `--max-deadline-seconds` overrides it. */
  readonly maxDeadlineSeconds?: number;
  /**
   * Subtasks each kind runs at once, for capacity warnings.
   * @default - every kind at the construct's defaults (`kindCapacity()`: 5 invocations × 5 messages)
   */
  readonly capacity?: Readonly<Record<string, number>>;
}

const USAGE = COMMAND_HELP.plan.usage;

const horizon = (value: string | undefined, fallback: number): number => {
  if (value === undefined) return fallback;
  const seconds = Number(value);
  if (!Number.isInteger(seconds) || seconds < 1) throw new UsageError('plan', `--max-deadline-seconds must be a positive whole number (got ${value})`, USAGE);
  return seconds;
};

/**
 * `tessera plan FILE`: validates a run request and prints the tiling code generated for it
 * (exit 0), or every problem that stops it (exit 1). `--json` prints
 * `{ ok, subtasks, warnings }` or `{ ok, problems }`. Capacity warnings (`capacity_short`) assume
 * the construct's default capacity per kind, as the plan command knows no deployment. Requests are checked against the worker module's
 * kinds, or against the catalog given (tests pass their own).
 *
 * @example
 * const plan = createPlanCommand();
 * await plan.run(['examples/tax.json'], processIo()); // 0 when it tiles
 */
export const createPlanCommand = (options: PlanCommandOptions = {}): Command => ({
  ...COMMAND_HELP.plan,
  run: async (args, io) => {
    const parsed = fileArgs('plan', USAGE, args, { flags: ['json'], options: ['max-deadline-seconds', 'workers'] });
    const maxDeadlineSeconds = horizon(parsed.values.get('max-deadline-seconds'), options.maxDeadlineSeconds ?? DEFAULT_MAX_DEADLINE_SECONDS);
    const body = await readJson(io, parsed.file);
    const loaded = options.catalog ?? (await cliRegistry(parsed.values.get('workers'))).catalog();
    const catalog = options.models ? withModels(loaded, options.models) : loaded;
    const capacity = options.capacity ?? Object.fromEntries(catalog.kinds().map((kind) => [kind, kindCapacity()]));
    const result = validateRunRequest(body, catalog, { maxDeadlineSeconds, capacity });
    if (parsed.flags.has('json')) {
      io.out(JSON.stringify(result.ok ? { ok: true, subtasks: result.subtasks, warnings: result.warnings } : result, null, 2));
    } else {
      io.out(result.ok ? formatPlan(result.request.universe, result.subtasks) : formatProblems(`${parsed.file} was rejected`, result.problems));
      if (result.ok) for (const line of formatWarnings(result.warnings)) io.err(line);
    }
    return result.ok ? 0 : 1;
  },
});
