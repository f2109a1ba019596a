import type { z } from 'zod';
import type { Checkpoint, CheckpointPartial, DispatchedSubtask, Observed, OutcomeInput, TerminalState } from '../contract';
import { classifyOutcome } from '../domain/outcome';
import { buildAssignment, deadlineMsOf, parseRunnableSubtask, scopeFor, type Assignment, type RunnableSubtask } from './assignment';
import type { DefinedWorker } from './define';
import { DeadlineExceeded, ModelNotAllowed, ScopeViolation, SubtaskCancelled, SubtaskHandedOver, TransientFailure } from './errors';
import { meterModel, type MeteredModel, type PortFailures } from './metered-model';
import type { BudgetPort, ModelAdapter } from './model';
import type { ModelProvider } from './models/provider';
import { openCheckpointer, type CheckpointPolicy, type CheckpointPort, type Checkpointer } from './checkpointer';
import { mergeObserved, openEvidence, type Evidence } from './observation';
import type { WorkerRegistry } from './registry';
import { openSession, raceAbort, type Session, type SetTimer } from './session';
import { sameJson, type ToolBinding } from './sources';

/**
 * What `runSubtask` needs: the claimed subtask and the ports it runs against.
 *
 * @example
 * await runSubtask({ subtask: claim.subtask, registry, models, budget: { reserve: () => ledger.reserveBudget(claim) } });
 */
export interface RunSubtaskOptions {
  /** The dispatched subtask as claimed: absolute `deadline`, `assigned` scope, `budget`, `input`, `model`. */
  readonly subtask: z.input<typeof DispatchedSubtask>;
  readonly registry: WorkerRegistry;
  /** Reserves each model call durably (the ledger). */
  readonly budget: BudgetPort;
  readonly models: ModelProvider;
  /** Clock in epoch milliseconds. @default Date.now */
  readonly now?: () => number;
  /** Starts the deadline timer on the clock of `now` (a test clock passes its own). @default setTimeout */
  readonly setTimer?: SetTimer;
  /** Cancellation from outside: the outcome becomes `cancelled`. */
  readonly signal?: AbortSignal;
  /**
   * How long to keep waiting for a worker that ignored its deadline. A result that arrives in
   * this window is classified by its data like any other; the ledger then refuses it as late and
   * keeps it as evidence, so nothing a worker produced is lost. `0` stops waiting at the deadline.
   * @default 0
   */
  readonly lateGraceMs?: number;
  /**
   * Where and how checkpoints are written while the worker runs (the ledger's `writeCheckpoint`
   * for this claim, docs/workers.md "Checkpoints"); none are written without it.
   */
  readonly checkpoints?: {
    readonly port: CheckpointPort;
    readonly generation: number;
    /** The last checkpoint stored for the subtask (`claim.checkpoint`): a redelivery resumes from its partial findings. */
    readonly previous?: Checkpoint | undefined;
    readonly policy?: Partial<CheckpointPolicy>;
    /**
     * When the subtask may hand over to its `subdivide` hedge pieces (`claim.handoverDueAt`, epoch
     * ms): for a kind with partial findings, the checkpointer's handover window flushes its findings
     * just before and holds new model calls across it.
     */
    readonly handoverAtMs?: number | undefined;
  };
}

/** Reasons are for people and stored in the ledger; the contract caps them at 500 characters. */
const REASON_LIMIT = 500;
const cap = (reason: string | undefined): string | undefined =>
  reason === undefined || reason.length <= REASON_LIMIT ? reason : `${reason.slice(0, REASON_LIMIT - 3)}...`;

const errorName = (error: unknown): string => (error instanceof Error ? error.name : typeof error);

const notRun = (subtaskId: string, state: TerminalState, reason: string): OutcomeInput => ({
  subtaskId,
  state,
  observed: null,
  sources: [],
  sourcesReached: 0,
  usage: { modelCalls: 0, estimatedCost: 0 },
  reason: cap(reason),
  refusals: [],
});

interface Prepared {
  readonly kind: DefinedWorker;
  readonly assignment: Assignment;
  readonly adapter: ModelAdapter;
}

/** Everything that can be decided before the worker starts; an outcome when it must not start. */
const prepare = (subtask: RunnableSubtask, kind: DefinedWorker, options: RunSubtaskOptions, now: () => number): Prepared | OutcomeInput => {
  if (now() >= deadlineMsOf(subtask.deadline)) return notRun(subtask.id, 'timed_out', `the deadline ${subtask.deadline} passed before the worker started`);
  if (options.signal?.aborted) return notRun(subtask.id, 'cancelled', 'the run was cancelled before the worker started');
  const scope = scopeFor(kind.dimension, subtask.assigned);
  if (!scope.ok) return notRun(subtask.id, 'invalid', scope.problem);
  const input = kind.parseInput(subtask.input);
  if (!input.ok) return notRun(subtask.id, 'invalid', `input failed its schema: ${input.issues.map((i) => `${i.path || '(input)'} ${i.message}`).join('; ')}`);
  try {
    const adapter = options.models.select({ model: subtask.model, offlineScripts: kind.offlineScripts });
    return { kind, assignment: buildAssignment(subtask, kind.dimension, scope.scope, input.input), adapter };
  } catch (error) {
    if (error instanceof ModelNotAllowed) return notRun(subtask.id, 'invalid', error.message);
    throw error;
  }
};

/** One running subtask: its stop switch, its evidence, its metered model. */
interface Run {
  readonly prepared: Prepared;
  readonly session: Session;
  readonly evidence: Evidence;
  readonly model: MeteredModel;
  readonly failures: PortFailures;
  readonly now: () => number;
  checkpointer: Checkpointer | undefined;
  /** An earlier generation's partial checkpoint this run resumes, for a kind with partial findings. */
  readonly resumed: CheckpointPartial | undefined;
}

const bindingFor = (run: Run, tool: string): ToolBinding<DefinedWorker['dimension']> => ({
  tool,
  scope: run.prepared.assignment.scope,
  input: run.prepared.assignment.input,
  recorder: run.evidence.recorder,
  signal: run.session.signal,
  reach: run.evidence.reach,
  refuse: (requested, reason) => {
    run.evidence.refuse({ tool, reason, requested });
    return new ScopeViolation(tool, requested, reason);
  },
  // Every source loads through the guard once a request passed its scope check: that is an ask.
  guard: (work) => {
    run.evidence.ask();
    return run.session.guard(work);
  },
  cover: (scope) => run.checkpointer?.covered(scope),
});

/** This run's observation, with what a resumed checkpoint's partial findings rest on. */
const observedOf = (run: Run): Observed => {
  const own = run.evidence.recorder.observed();
  return run.resumed === undefined ? own : mergeObserved(run.resumed.observed, own);
};

type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };

const settle = (work: Promise<unknown>): Promise<Settled> =>
  work.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

/** The baseline comparison of the catering example: the direct function uses no model calls by construction. */
const compareBaseline = async (run: Run, findings: unknown) => {
  const { kind, assignment } = run.prepared;
  if (!kind.hasBaseline) return {};
  let matched: boolean;
  try {
    const expected = kind.output.safeParse(await kind.baseline(assignment.input));
    matched = expected.success && sameJson(expected.data, findings);
  } catch {
    // A baseline that cannot compute the answer does not match it; the worker's outcome stands.
    matched = false;
  }
  return { baseline: { matched, workerModelCalls: run.model.usage().modelCalls, baselineModelCalls: 0 } };
};

/** Settles with `work`, or with a timeout failure after `ms`. */
const within = (work: Promise<unknown>, ms: number): Promise<Settled> => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Settled>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, error: new Error('late grace elapsed') }), ms);
  });
  return Promise.race([settle(work), timeout]).finally(() => clearTimeout(timer));
};

/** Turns what happened into the outcome, by the outcome rules (lib/domain/outcome.ts). */
const conclude = async (run: Run, settled: Settled, settledAt: number, late = false): Promise<OutcomeInput> => {
  const { kind, assignment } = run.prepared;
  const observed = observedOf(run);
  const sources = run.evidence.sources();
  const finish = (state: TerminalState, reason: string | undefined, extra: Partial<OutcomeInput> = {}): OutcomeInput => ({
    subtaskId: assignment.subtaskId,
    state,
    ...(reason === undefined ? {} : { reason: cap(reason) }),
    observed,
    sources,
    sourcesReached: sources.length,
    usage: run.model.usage(),
    refusals: run.evidence.refusals(),
    ...extra,
  });
  const classify = (extra: { cancelled?: boolean; outputValid: boolean; outputIssues?: string[] }) =>
    classifyOutcome({ dimension: kind.dimension, observed, sourcesReached: sources.length, sourcesAsked: run.evidence.asked(), ...extra });

  const halted = run.session.haltReason;
  if (halted instanceof SubtaskCancelled) return finish('cancelled', classify({ cancelled: true, outputValid: false }).reason);
  if (!late && (halted instanceof DeadlineExceeded || settledAt >= assignment.deadlineMs)) {
    return finish('timed_out', `the deadline ${assignment.deadline} passed before the worker finished`);
  }
  const output = settled.ok ? kind.output.safeParse(settled.value) : undefined;
  if (!output?.success) {
    // Exhaustion explains a failure better than the error it caused; a valid result still stands.
    const reason = run.failures.exhausted?.reason ?? (settled.ok ? undefined : `worker threw ${errorName(settled.error)}`);
    if (reason !== undefined) return finish('invalid', reason);
    const outputIssues = output?.error.issues.map((issue) => `${issue.path.join('.') || '(output)'} ${issue.message}`) ?? [];
    const classification = classify({ outputValid: false, outputIssues });
    return finish(classification.state, classification.reason);
  }
  const classification = classify({ outputValid: true });
  return finish(classification.state, classification.reason, { findings: output.data, ...(await compareBaseline(run, output.data)) });
};

/**
 * Runs one subtask with its worker kind and returns the outcome the SDK classified.
 *
 * It never throws because of the worker: a worker that throws, returns output that fails its
 * schema, or exhausts its allowance gives an `invalid` outcome; the deadline gives `timed_out`;
 * outside cancellation gives `cancelled`. It throws for what the caller must decide on: an
 * assignment it cannot run (`InvalidAssignment`), an unknown kind, a `TransientFailure` (deliver
 * again later), `SubtaskHandedOver` (the hedge pieces read the rest: no outcome), and infrastructure errors of the budget port such as `LeaseLost` or `RunCancelled`.
 *
 * @example
 * const outcome = await runSubtask({ subtask: claim.subtask, registry: referenceRegistry, models,
 *   budget: { reserve: () => ledger.reserveBudget(claim) } });
 * await ledger.recordOutcome(claim, outcome);
 */
export const runSubtask = async (options: RunSubtaskOptions): Promise<OutcomeInput> => {
  const subtask = parseRunnableSubtask(options.subtask);
  const kind = options.registry.get(subtask.worker);
  const now = options.now ?? Date.now;
  const prepared = prepare(subtask, kind, options, now);
  if (!('assignment' in prepared)) return prepared;
  const { assignment } = prepared;
  const session = openSession({ deadlineMs: assignment.deadlineMs, deadline: assignment.deadline, now, setTimer: options.setTimer, outside: options.signal });
  const evidence = openEvidence(kind.dimension);
  const failures: PortFailures = {};
  const model = meterModel({
    adapter: prepared.adapter,
    budget: options.budget,
    estimatedCostPerCall: assignment.allowance.estimatedCostPerCall,
    deadline: assignment.deadline,
    session,
    failures,
    refuse: evidence.refuse,
    // The handover window holds new model calls across the hedge's cut (docs/hedging.md, "Handover").
    hold: (expectedMs) => run.checkpointer?.holdModelCall(expectedMs) ?? Promise.resolve(),
    now,
  });
  const previous = options.checkpoints?.previous;
  const resumed = kind.partialFindings ? previous?.partial : undefined;
  const run: Run = { prepared, session, evidence, model, failures, now, checkpointer: undefined, resumed };
  const checkpointer =
    options.checkpoints === undefined
      ? undefined
      : openCheckpointer(
          {
            dimension: kind.dimension,
            assigned: subtask.assigned,
            observed: () => observedOf(run),
            sources: evidence.sources,
            usage: model.usage,
          },
          {
            ...options.checkpoints,
            previous: resumed === undefined ? undefined : previous,
            // Only a kind with partial findings can hand over: another's window would cost writes and waits for nothing.
            handoverAtMs: kind.partialFindings ? options.checkpoints.handoverAtMs : undefined,
            deadlineMs: assignment.deadlineMs,
            now,
            setTimer: options.setTimer ?? realSetTimer,
            // The subtask handed over to its hedge pieces: stop reading; its checkpoint is the prefix.
            onHandedOver: () => session.halt(new SubtaskHandedOver(assignment.subtaskId)),
          },
        );
  run.checkpointer = checkpointer;
  try {
    // Only a halt (deadline, cancellation, lost lease) stops the wait; after a mere stop
    // (allowance exhausted) the worker may still return what it has.
    const execution = kind.execute({
      assignment,
      model,
      signal: session.signal,
      remainingMs: session.remainingMs,
      binding: (tool) => bindingFor(run, tool),
      checkpoint: (findings) => checkpointer?.partial(findings),
      ...(resumed === undefined ? {} : { resumeFrom: { covered: resumed.covered, findings: resumed.findings } }),
    });
    let settled = await settle(raceAbort(session.halted, execution));
    let late = false;
    const grace = options.lateGraceMs ?? 0;
    if (!settled.ok && session.haltReason instanceof DeadlineExceeded && grace > 0) {
      const after = await within(execution, grace);
      if (after.ok) [settled, late] = [after, true];
    }
    const settledAt = now();
    if (session.haltReason instanceof SubtaskHandedOver) throw session.haltReason;
    if (failures.fatal !== undefined) throw failures.fatal;
    if (!settled.ok && settled.error instanceof TransientFailure) throw settled.error;
    return await conclude(run, settled, settledAt, late);
  } finally {
    checkpointer?.close();
    session.close();
  }
};

const realSetTimer: SetTimer = (callback, delayMs) => {
  const timer = setTimeout(callback, delayMs);
  timer.unref?.();
  return () => clearTimeout(timer);
};
