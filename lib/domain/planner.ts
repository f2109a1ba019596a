import {
  MAX_RUN_SUBTASKS,
  RunRequest,
  type DispatchedSubtask,
  type PlanWarning,
  type Problem,
  type ProblemCode,
  type RunBudget,
  type Scope,
  type SplitSpec,
  type SubtaskBudget,
  type SubtaskSpec,
  type Universe,
} from '../contract';
import { allowanceOf } from './allowance';
import { boundaryProblems, splitByCalendar, splitAtBoundaries } from './calendar-split';
import { capacityWarnings } from './capacity';
import type { WorkerCatalog } from './catalog';
import { ScopeError, SplitError } from './errors';
import { chunkBySize, chunkEvenly, indexIds } from './ids';
import { hedgeProblem } from './hedge';
import { RESERVED_ID_SUFFIX } from './lineage';
import { checkTiling, type Tile } from './tiling';
import { readTimeRange, timeAlgebra } from './time';
import { listSome } from './words';

/** The deadline horizon when a deployment does not set `MAX_DEADLINE_SECONDS`. */
export const DEFAULT_MAX_DEADLINE_SECONDS = 900;

/**
 * The most subtasks one plan may dispatch in its first round (the contract's `MAX_RUN_SUBTASKS`).
 * It is the only size rule: every round runs as batches of child executions, so the run's own
 * execution history grows by batches, and its bound is the construct's (docs/deadlines.md).
 */
export const MAX_SUBTASKS = MAX_RUN_SUBTASKS;

export interface PlanOptions {
  /** Longest `deadlineSeconds` a subtask may ask for. */
  readonly maxDeadlineSeconds: number;
  /**
   * Subtasks each worker kind runs at once (the deployment's `maxConcurrency × batchSize`), by
   * kind. With it, a kind that declares `typicalSeconds` is warned about when its subtasks cannot
   * finish by their deadlines (`capacity_short`). Without it, no capacity is judged.
   */
  readonly capacity?: Readonly<Record<string, number>>;
}

/** Problem codes of a rejected request: the contract's, plus `invalid_request` for schema issues. */
export type RequestProblemCode = ProblemCode | 'invalid_request';

/** One precise reason a request is rejected, always with the field path it is about. */
export type RequestProblem = Omit<Problem, 'code' | 'path'> & { readonly code: RequestProblemCode; readonly path: string };

export type PlanResult =
  { readonly ok: true; readonly subtasks: DispatchedSubtask[]; readonly warnings: PlanWarning[] } | { readonly ok: false; readonly problems: RequestProblem[] };

/** The delegation fields a subtask or a split carries. */
type Delegation = Pick<SubtaskSpec, 'worker' | 'questionIds' | 'required' | 'justification' | 'deadlineSeconds' | 'budget' | 'input' | 'model' | 'hedge'>;

/** A subtask about to be dispatched, with the request paths its problems are reported at. */
interface Draft {
  readonly id: string;
  readonly scope: Scope;
  readonly delegation: Delegation;
  /** Path of the scope in the request: `subtasks.1.scope`, `split` or `split.groups.2`. */
  readonly scopePath: string;
}

/**
 * Generated subtask ids: `A`…`Z`, `AA`, `AB`… (bijective base 26), or `prefix` + 1-based number.
 *
 * @example
 * generatedId(27) // 'AB'
 * generatedId(0, 'chunk-') // 'chunk-1'
 */
export const generatedId = (index: number, prefix?: string): string => {
  if (prefix !== undefined) return `${prefix}${index + 1}`;
  let id = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) id = String.fromCharCode(65 + ((n - 1) % 26)) + id;
  return id;
};

/**
 * A subtask's allowance must fit in the run's: more calls, or calls × cost per call beyond the
 * run's cost limit, could never be spent and would only fail at the first reservation.
 */
const budgetProblems = (budget: SubtaskBudget, path: string, run: RunBudget): RequestProblem[] => {
  const problems: RequestProblem[] = [];
  if (budget.modelCalls > run.modelCalls) {
    problems.push({
      code: 'budget_exceeds_run',
      path: `${path}.budget.modelCalls`,
      message: `must not exceed the run's budget.modelCalls (${run.modelCalls}; got ${budget.modelCalls})`,
    });
  }
  const { cost } = allowanceOf(budget);
  if (cost > run.costLimit) {
    problems.push({
      code: 'budget_exceeds_run',
      path: `${path}.budget.estimatedCostPerCall`,
      message: `${budget.modelCalls} calls × ${budget.estimatedCostPerCall} = ${cost} must not exceed the run's budget.costLimit (${run.costLimit})`,
    });
  }
  return problems;
};

const modelProblems = (model: string | undefined, path: string, catalog: WorkerCatalog): RequestProblem[] => {
  const allowed = catalog.models?.();
  if (model === undefined || allowed === undefined || allowed.includes(model)) return [];
  return [{ code: 'unknown_model', path: `${path}.model`, message: `unknown model ${model} (allowed: ${allowed.join(', ') || 'none'})` }];
};

/** Problems with a delegation's worker kind, input, deadline, budget and model, at `path` (`subtasks.1` or `split`). */
const delegationProblems = (delegation: Delegation, path: string, request: RunRequest, catalog: WorkerCatalog, options: PlanOptions): RequestProblem[] => {
  const { universe } = request;
  const problems: RequestProblem[] = [];
  const info = catalog.get(delegation.worker);
  if (!info) {
    const known = catalog.kinds().join(', ');
    problems.push({ code: 'unknown_worker', path: `${path}.worker`, message: `unknown worker kind ${delegation.worker} (known: ${known || 'none'})` });
  } else {
    if (info.dimension !== universe.dimension) {
      problems.push({
        code: 'dimension_mismatch',
        path: `${path}.worker`,
        message: `worker kind ${info.kind} works on ${info.dimension} scopes but the universe is ${universe.dimension}`,
      });
    }
    for (const issue of info.validateInput(delegation.input)) {
      problems.push({ code: 'invalid_input', path: issue.path ? `${path}.input.${issue.path}` : `${path}.input`, message: issue.message });
    }
  }
  if (delegation.deadlineSeconds < 1 || delegation.deadlineSeconds > options.maxDeadlineSeconds) {
    problems.push({
      code: 'deadline_out_of_horizon',
      path: `${path}.deadlineSeconds`,
      message: `must be between 1 and ${options.maxDeadlineSeconds} seconds (got ${delegation.deadlineSeconds})`,
    });
  }
  return [...problems, ...budgetProblems(delegation.budget, path, request.budget), ...modelProblems(delegation.model, path, catalog)];
};

const splitProblem = (error: SplitError | ScopeError): RequestProblem => ({
  code: error instanceof SplitError ? error.code : 'invalid_request',
  path: `split.${error.field}`,
  message: error instanceof SplitError ? error.reason : error.message,
});

const timeScopes = (universe: Extract<Universe, { dimension: 'time' }>, split: SplitSpec): Scope[] => {
  const whole = readTimeRange(universe);
  const pieces =
    split.parts !== undefined
      ? timeAlgebra.split(whole, split.parts)
      : split.by !== undefined
        ? splitByCalendar(whole, split.by, MAX_SUBTASKS)
        : splitAtBoundaries(whole, split.boundaries ?? []);
  return pieces.flatMap((piece) => timeAlgebra.toScopes(piece));
};

const listScopes = <T>(items: readonly T[], split: SplitSpec, toScope: (chunk: T[]) => Scope): Scope[] => {
  const chunks = split.parts !== undefined ? chunkEvenly(items, split.parts) : chunkBySize(items, split.chunkSize ?? items.length);
  return chunks.map(toScope);
};

/** Fields of a split that do not apply to a dimension. */
const INAPPLICABLE = { time: ['chunkSize', 'groups'], ids: ['by', 'boundaries', 'groups'], paths: ['by', 'boundaries'] } as const;

/**
 * The scopes a split decision generates: code, not a model, turns "four parts" or "by month"
 * into intervals. Throws `SplitError` when the split cannot be made.
 */
const scopesOfSplit = (universe: Universe, split: SplitSpec): Scope[] => {
  const wrong = INAPPLICABLE[universe.dimension].find((field) => split[field] !== undefined);
  if (wrong) throw new SplitError('dimension_mismatch', wrong, `does not apply to a ${universe.dimension} universe`);
  if (universe.dimension === 'time') return timeScopes(universe, split);
  if (universe.dimension === 'ids') return listScopes(indexIds(universe.ids).ids, split, (ids) => ({ ids }));
  if (split.groups !== undefined) return split.groups.map((files) => ({ files }));
  return listScopes(universe.files, split, (files) => ({ files }));
};

const draftsOfSplit = (universe: Universe, split: SplitSpec): { drafts: Draft[]; problems: RequestProblem[] } => {
  if (universe.dimension === 'time' && split.boundaries !== undefined) {
    const errors = boundaryProblems(readTimeRange(universe), split.boundaries);
    if (errors.length > 0) return { drafts: [], problems: errors.map(splitProblem) };
  }
  let scopes: Scope[];
  try {
    scopes = scopesOfSplit(universe, split);
  } catch (error) {
    if (error instanceof SplitError || error instanceof ScopeError) return { drafts: [], problems: [splitProblem(error)] };
    throw error;
  }
  if (scopes.length > MAX_SUBTASKS) {
    return {
      drafts: [],
      problems: [{ code: 'plan_too_large', path: 'split', message: `the split makes ${scopes.length} subtasks; at most ${MAX_SUBTASKS} are allowed` }],
    };
  }
  const drafts = scopes.map((scope, i) => ({
    id: generatedId(i, split.idPrefix),
    scope,
    delegation: split,
    scopePath: split.groups !== undefined ? `split.groups.${i}` : 'split',
  }));
  return { drafts, problems: [] };
};

const idProblems = (subtasks: readonly SubtaskSpec[]): RequestProblem[] => {
  const seen = new Map<string, number>();
  return subtasks.flatMap((subtask, i): RequestProblem[] => {
    const path = `subtasks.${i}.id`;
    const first = seen.get(subtask.id);
    if (first === undefined) seen.set(subtask.id, i);
    if (first !== undefined) {
      return [{ code: 'duplicate_subtask_id', path, subtaskIds: [subtask.id], message: `subtask id ${subtask.id} is already used by subtasks.${first}` }];
    }
    if (RESERVED_ID_SUFFIX.test(subtask.id)) {
      return [
        {
          code: 'invalid_request',
          path,
          subtaskIds: [subtask.id],
          message: `subtask id ${subtask.id} must not end in .r<n>, .g<n> or .h<n>: those name retries, re-checks and hedge copies`,
        },
      ];
    }
    return [];
  });
};

/** Every delegation's `questionIds` with the field path of the list. */
const questionLists = (request: RunRequest): { readonly path: string; readonly ids: readonly string[] }[] => [
  ...(request.split ? [{ path: 'split.questionIds', ids: request.split.questionIds }] : []),
  ...(request.subtasks ?? []).map((s, i) => ({ path: `subtasks.${i}.questionIds`, ids: s.questionIds })),
];

/**
 * The questions' problems: a question id declared twice; a delegation naming a question twice,
 * or naming one the request does not declare, whether it declares other questions or none at all
 * (a typo would otherwise leave that subtask's question out of `missingQuestions`, and a run
 * would succeed with `missingQuestions: []` for a question nobody declared); a declared question
 * no subtask was given.
 */
const questionProblems = (request: RunRequest, drafts: readonly Draft[]): RequestProblem[] => {
  const declared = request.questions ?? [];
  const firstAt = new Map<string, number>();
  const duplicates = declared.flatMap((question, i): RequestProblem[] => {
    const first = firstAt.get(question.id);
    if (first === undefined) firstAt.set(question.id, i);
    return first === undefined
      ? []
      : [{ code: 'duplicate_question', path: `questions.${i}.id`, message: `question ${question.id} is already declared at questions.${first}.id` }];
  });
  const named = questionLists(request).flatMap(({ path, ids }) => {
    const seen = new Map<string, number>();
    return ids.flatMap((id, j): RequestProblem[] => {
      const before = seen.get(id);
      if (before !== undefined)
        return [{ code: 'duplicate_question', path: `${path}.${j}`, message: `names question ${id} twice (also at ${path}.${before})` }];
      seen.set(id, j);
      if (firstAt.has(id)) return [];
      const message =
        request.questions === undefined
          ? `names question ${id}, but the request declares no questions: declare it in questions`
          : `names question ${id}, which questions does not declare (declared: ${declared.length === 0 ? 'none' : listSome([...firstAt.keys()], 10)})`;
      return [{ code: 'unknown_question', path: `${path}.${j}`, message }];
    });
  });
  const assigned = new Set(drafts.flatMap((d) => d.delegation.questionIds));
  const unassigned = [...firstAt].flatMap(([id, i]): RequestProblem[] =>
    assigned.has(id) ? [] : [{ code: 'unassigned_question', path: `questions.${i}.id`, message: `question ${id} is not assigned to any subtask` }],
  );
  return [...duplicates, ...named, ...unassigned];
};

/** Tiling problems at request paths; a group's scope is the group itself, not a `files` field. */
const tilingProblems = (universe: Universe, drafts: readonly Draft[]): RequestProblem[] => {
  const tiles: Tile[] = drafts.map((d) => ({ id: d.id, scope: d.scope, path: d.scopePath }));
  return checkTiling(universe, tiles).map((problem) => {
    const path = (problem.path ?? 'subtasks').replace(/^(split(?:\.groups\.\d+)?)\.(?:files|ids|from|toExclusive)$/, '$1');
    return { ...problem, path };
  });
};

/** Hedges whose copies cannot be made: a scope too small to subdivide, an id too long to suffix. */
const hedgeProblems = (drafts: readonly Draft[]): RequestProblem[] =>
  drafts.flatMap((draft): RequestProblem[] => {
    const { hedge } = draft.delegation;
    if (hedge === undefined) return [];
    const problem = hedgeProblem(draft.id, draft.scope, hedge);
    if (problem === undefined) return [];
    const delegationPath = draft.scopePath.replace(/\.scope$|\.groups\.\d+$/, '');
    return [
      {
        code: 'invalid_request',
        path: problem.field ? `${delegationPath}.hedge.${problem.field}` : `${delegationPath}.hedge`,
        subtaskIds: [draft.id],
        message: problem.message,
      },
    ];
  });

const dispatched = (draft: Draft): DispatchedSubtask => {
  const { worker, questionIds, required, justification, deadlineSeconds, budget, input, model, hedge } = draft.delegation;
  return {
    id: draft.id,
    worker,
    round: 1,
    questionIds: [...questionIds],
    required,
    ...(justification === undefined ? {} : { justification }),
    assigned: draft.scope,
    deadlineSeconds,
    budget: { ...budget },
    ...(input === undefined ? {} : { input }),
    ...(model === undefined ? {} : { model }),
    ...(hedge === undefined ? {} : { hedge: { ...hedge } }),
  };
};

/**
 * Turns a validated run request into its first round of subtasks, or rejects it with every
 * problem at once, each with its field path: a plan that does not tile (every gap and overlap
 * with exact bounds and subtask ids), a scope of the wrong dimension or outside the universe,
 * duplicate subtask or universe ids, an unknown worker kind or one of another dimension,
 * invalid worker input, a deadline outside `1..maxDeadlineSeconds`, a subtask allowance
 * larger than the run's budget, a `model` the catalog does not allow, a declared question
 * nobody was given, a question id declared or named twice, a `questionIds` entry the declared
 * questions do not include, or more than {@link MAX_SUBTASKS} subtasks. Nothing is dispatched here.
 *
 * @example
 * const plan = planRun(request, catalog, { maxDeadlineSeconds: 900 });
 * if (!plan.ok) plan.problems[0]; // { code: 'assignment_overlap', path: 'subtasks.1.scope.from',
 *                                 //   subtaskIds: ['A', 'B'], from: '2025-03-01', toExclusive: '2025-04-01', … }
 */
export const planRun = (request: RunRequest, catalog: WorkerCatalog, options: PlanOptions): PlanResult => {
  const { universe } = request;
  const fromSplit = request.split ? draftsOfSplit(universe, request.split) : { drafts: [], problems: [] };
  const handWritten = (request.subtasks ?? []).map((s, i): Draft => ({ id: s.id, scope: s.scope, delegation: s, scopePath: `subtasks.${i}.scope` }));
  const drafts = request.split ? fromSplit.drafts : handWritten;
  const problems: RequestProblem[] = [
    ...(request.split ? delegationProblems(request.split, 'split', request, catalog, options) : []),
    ...(request.subtasks ?? []).flatMap((s, i) => delegationProblems(s, `subtasks.${i}`, request, catalog, options)),
    // Synthesis spends from the run's budget too, so its own allowance must fit it.
    ...(request.synthesis
      ? [...budgetProblems(request.synthesis.budget, 'synthesis', request.budget), ...modelProblems(request.synthesis.model, 'synthesis', catalog)]
      : []),
    ...idProblems(request.subtasks ?? []),
    ...fromSplit.problems,
    ...(drafts.length > 0 ? tilingProblems(universe, drafts) : []),
    ...questionProblems(request, drafts),
    ...hedgeProblems(drafts),
  ];
  if (problems.length > 0) return { ok: false, problems };
  const demands = drafts.map((d) => ({
    worker: d.delegation.worker,
    deadlineSeconds: d.delegation.deadlineSeconds,
    path: d.scopePath.startsWith('split') ? 'split.deadlineSeconds' : d.scopePath.replace(/\.scope$/, '.deadlineSeconds'),
  }));
  return { ok: true, subtasks: drafts.map(dispatched), warnings: options.capacity ? capacityWarnings(demands, catalog, options.capacity) : [] };
};

export type ValidationResult =
  | { readonly ok: true; readonly request: RunRequest; readonly subtasks: DispatchedSubtask[]; readonly warnings: PlanWarning[] }
  | { readonly ok: false; readonly problems: RequestProblem[] };

/** The value at a zod issue path in the raw body, for quoting it back. */
const valueAt = (body: unknown, path: readonly PropertyKey[]): unknown =>
  path.reduce<unknown>((current, key) => (typeof current === 'object' && current !== null ? Reflect.get(current, key) : undefined), body);

/** A problem quotes at most this many characters of a string: enough to find it, never a megabyte of it. */
const QUOTED_CHARACTERS = 80;

const quoted = (value: unknown): string => {
  if (typeof value === 'string' && value.length > QUOTED_CHARACTERS) {
    return ` (got ${JSON.stringify(value.slice(0, QUOTED_CHARACTERS))}…, ${value.length.toLocaleString('en-US')} characters)`;
  }
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? ` (got ${JSON.stringify(value)})` : '';
};

/**
 * The whole validation of a `POST /runs` body or a `tessera plan FILE`: the zod schema first
 * (field-precise `invalid_request` problems, such as a required subtask without a
 * justification or a budget that is not positive), then, for a well-formed request, the planner.
 *
 * @example
 * const result = validateRunRequest(JSON.parse(body), catalog, { maxDeadlineSeconds: 900 });
 * if (!result.ok) return badRequest(result.problems); // 400, nothing written or sent
 */
export const validateRunRequest = (body: unknown, catalog: WorkerCatalog, options: PlanOptions): ValidationResult => {
  const parsed = RunRequest.safeParse(body);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue): RequestProblem => {
      const message = issue.code === 'custom' || issue.code === 'invalid_format' ? `${issue.message}${quoted(valueAt(body, issue.path))}` : issue.message;
      return { code: 'invalid_request', path: issue.path.map(String).join('.'), message };
    });
    return { ok: false, problems };
  }
  const plan = planRun(parsed.data, catalog, options);
  return plan.ok ? { ok: true, request: parsed.data, subtasks: plan.subtasks, warnings: plan.warnings } : plan;
};
