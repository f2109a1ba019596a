import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import { z } from 'zod';
import type { Answer, Coverage, RunStatus } from '../contract';
import {
  assessCoverage,
  currentRound,
  decideStatus,
  findConflicts,
  planNextRound,
  reconcile,
  synthesisInputs,
  withRecheckInputs,
  type DegradedReason,
} from '../domain';

type StatusDecision = ReturnType<typeof decideStatus>;
import { METRIC_DIMENSIONS, METRICS } from '../observability/metrics';
import {
  CLOSED_RUN_ERROR_CODES,
  ExecutionStatusChange,
  RUN_ABORTED_ERROR_CODE,
  RunExecutionInput,
  type UnfinishedExecutionStatus,
} from '../orchestration/execution-events';
import { jsonVariable, parseInput } from '../runtime/config';
import { publishMetrics, startInvocation } from '../runtime/lambda';
import { createModelProvider, parseModelConfig } from '../workers';
import type { ReconcileDeps } from './deps';
import { runFindings, synthesizedAnswer, withConflicts, type SynthesisClosing } from './synthesize';
import { appendUnlessCancelled } from './rounds';

const run = { runId: z.string().min(1), tenantId: z.string().min(1) };
const ReconcileTask = z.discriminatedUnion('mode', [
  z.object({ mode: z.literal('reconcile'), ...run, round: z.int().min(1) }),
  /** A Task failed for good (its Catch led here): end the run failed, with whatever coverage it has. */
  z.object({ mode: z.literal('abort'), ...run, error: z.object({ Error: z.string().optional(), Cause: z.string().optional() }).loose().optional() }),
]);

/**
 * What the reconcile function is given: a task of the state machine, or (from the EventBridge
 * rule) the status change of an execution that ended FAILED, TIMED_OUT or ABORTED.
 */
export const ReconcileEvent = z.union([ReconcileTask, ExecutionStatusChange]);
export type ReconcileEvent = z.infer<typeof ReconcileEvent>;

/** An abort that closes the run of an execution that already ended, with its own reason. */
type CloseTask = z.infer<typeof ReconcileTask> & {
  readonly closes?: { readonly executionStatus: UnfinishedExecutionStatus; readonly what: string; readonly error: RunError };
};
type RunError = { code: string; message: string };

/** What reconcile hands the state machine: another round, or the run's end. */
export type ReconcileResult =
  | { readonly next: 'dispatch'; readonly runId: string; readonly tenantId: string; readonly round: number }
  | { readonly next: 'finish'; readonly runId: string; readonly tenantId: string; readonly round: number; readonly status: RunStatus };

const ENDED: Readonly<Record<UnfinishedExecutionStatus, (error: string | null | undefined) => string>> = {
  FAILED: (error) => `failed (${error || 'no error named'})`,
  TIMED_OUT: () => 'timed out',
  ABORTED: () => 'was aborted',
};

/**
 * The run of an execution that ended unfinished (Finalize failed, the execution was aborted or
 * timed out, or failed past every Catch) is closed as Finalize would have closed it, with a
 * reason naming what happened. The run is named by the execution's input.
 */
const toTask = (event: ReconcileEvent): CloseTask => {
  if (!('detail' in event)) return event;
  const { detail } = event;
  const execution = parseInput('Reconcile', z.object({ input: jsonVariable(RunExecutionInput) }), { input: detail.input }).input;
  const ended = ENDED[detail.status](detail.error);
  const message = `the run's execution ${ended} before the run was recorded; the run was closed when the execution ended`;
  return {
    mode: 'abort',
    runId: execution.runId,
    tenantId: execution.tenantId,
    closes: { executionStatus: detail.status, what: `its execution ${ended}`, error: { code: CLOSED_RUN_ERROR_CODES[detail.status], message } },
  };
};

/** The run's final status: a cancelled run stays cancelled, an aborted one fails, else the policy decides. */
const finalStatus = (runStatus: RunStatus, task: CloseTask, decision: StatusDecision): Exclude<RunStatus, 'running'> => {
  if (runStatus === 'cancelled') return 'cancelled';
  if (task.mode === 'abort') return 'failed';
  return decision.status;
};

/** The error the run ends with, if any: why its execution ended, why a step failed, or the required gap. */
const closingError = (task: CloseTask, status: RunStatus, decision: StatusDecision): RunError | undefined => {
  // A cancelled run's execution ends because the cancel stopped it: the cancellation is the story.
  if (task.closes) return status === 'cancelled' ? undefined : task.closes.error;
  // The step's own error name (an adapter's class, `States.TaskFailed`) is logged, never made
  // public: a run's `error.code` is one of the codes docs/api.md lists ("Run error codes").
  if (task.mode === 'abort') return { code: RUN_ABORTED_ERROR_CODE, message: 'a step of the run failed after its retries; see the execution history' };
  if (decision.status === 'failed' && status === 'failed') return { code: decision.error.name, message: decision.error.message };
  return undefined;
};

/** Why a failed run failed, in the answer's words. */
const failureReason = (task: CloseTask): string => {
  if (task.closes) return task.closes.what;
  if (task.mode === 'abort') return 'a step could not be completed';
  return 'required coverage is missing';
};

/**
 * The answer: synthesis reads only `ok` outcomes (and re-checks that found data); a failed run
 * keeps its coverage but gives no result, because its policy says the parts cannot be trusted whole.
 */
const composeAnswer = async (deps: ReconcileDeps, status: RunStatus, task: CloseTask, closing: SynthesisClosing): Promise<Answer> => {
  const { reconciliation } = closing;
  const coverage = withConflicts(closing.coverage, findConflicts(runFindings(deps.registry, reconciliation)));
  if (status === 'failed') return { text: `The run failed: ${failureReason(task)}. ${coverage.statement}`, result: {}, coverage };
  const merged = deps.registry.merge(synthesisInputs(reconciliation).map((i) => ({ worker: i.subtask.worker, findings: i.outcome.findings })));
  // A model synthesis only when the request asks for one, and only for a run that succeeded.
  if (closing.request !== undefined && status === 'succeeded') {
    const models = deps.models ?? OFFLINE_MODELS;
    const synthesized = await synthesizedAnswer({ ledger: deps.ledger, registry: deps.registry, models }, { ...closing, coverage }, merged.text);
    return { text: synthesized.text, result: merged.result, coverage: synthesized.coverage, synthesis: synthesized.synthesis };
  }
  return { text: [merged.text, coverage.statement].filter(Boolean).join(' '), result: merged.result, coverage };
};

/** The models of a reconcile built without any: the offline model alone. */
const OFFLINE_MODELS = createModelProvider({ config: parseModelConfig({}) });

/** Run-level metrics: they join what was dispatched with what came back, which no component metric can. */
const emitMetrics = (metrics: Metrics, status: string, coverage: Coverage, degraded: readonly DegradedReason[], states: readonly string[], task: CloseTask) => {
  const count = (name: string, dimension?: [string, string]) => {
    const single = metrics.singleMetric();
    if (dimension) single.addDimension(...dimension);
    single.addMetric(name, MetricUnit.Count, 1);
  };
  count(METRICS.runsFinished, [METRIC_DIMENSIONS.status, status]);
  if (!coverage.complete) count(METRICS.runsDegraded);
  for (const why of new Set(degraded.map((reason) => reason.why))) count(METRICS.degradedByReason, [METRIC_DIMENSIONS.reason, why]);
  for (const state of states) count(METRICS.subtasksByState, [METRIC_DIMENSIONS.state, state]);
  const rechecked = coverage.gaps.filter((g) => g.recheckedAgainst !== undefined).length;
  if (rechecked > 0) metrics.singleMetric().addMetric(METRICS.gapsRechecked, MetricUnit.Count, rechecked);
  if (task.closes && status !== 'cancelled') count(METRICS.runsClosedOnExecutionEnd, [METRIC_DIMENSIONS.executionStatus, task.closes.executionStatus]);
  publishMetrics(metrics);
};

/**
 * Reconcile and close: compare outcomes with the manifest; send the gaps and retries back out as
 * the next round while rounds remain; otherwise write the answer, whose coverage is computed only
 * from the manifest and the outcomes, and whose result is synthesized only from `ok` outcomes.
 *
 * @example
 * const next = await reconcileRun(deps)({ mode: 'reconcile', runId, tenantId, round: 1 }); // { next: 'dispatch', round: 2, … }
 */
export const reconcileRun =
  (deps: ReconcileDeps) =>
  async (event: ReconcileEvent): Promise<ReconcileResult> => {
    const task = toTask(event);
    startInvocation(deps.logger, { runId: task.runId, tenantId: task.tenantId, mode: task.mode });
    if (task.mode === 'abort' && task.error) deps.logger.error('a step of the run failed', { stepError: task.error.Error, cause: task.error.Cause });
    const read = await deps.ledger.readManifest(task.tenantId, task.runId);
    const manifest = { ...read.manifest, sources: deps.sources };
    const round = currentRound(manifest);
    const ref = { runId: task.runId, tenantId: task.tenantId };
    // An execution's end can only close a run nothing else closed: a run that ended (or was
    // cancelled and already answered) stays exactly as it is, so a repeated event changes nothing.
    if (task.closes && !(read.run.status === 'running' || (read.run.status === 'cancelled' && read.run.answer === undefined))) {
      deps.logger.info('execution ended after its run was closed', { status: read.run.status, executionStatus: task.closes.executionStatus });
      return { next: 'finish', ...ref, round, status: read.run.status };
    }
    // A retried Task whose earlier attempt appended the next round: that round is the decision.
    if (task.mode === 'reconcile' && read.run.status === 'running' && round > task.round) return { next: 'dispatch', ...ref, round };
    // A subtask won by its subdivide pieces is judged by the pieces' observations.
    const reconciliation = reconcile(manifest, read.outcomes, read.pieces);
    let runStatus = read.run.status;
    if (task.mode === 'reconcile' && runStatus === 'running') {
      // The next round is planned here, once, and stored as planned: Dispatch sends exactly it.
      const next = planNextRound(manifest, read.outcomes, reconciliation);
      if (next.length > 0) {
        const at = read.uncommittedDispatchedAt ?? new Date(deps.now()).toISOString();
        // A re-check by an alternate kind that takes another input gets it mapped here, as planned.
        const subtasks = withRecheckInputs(next, manifest, deps.registry.catalog());
        const input = { ...ref, round: round + 1, subtasks, dispatchedAt: at };
        if (await appendUnlessCancelled(deps.ledger, input)) return { next: 'dispatch', ...ref, round: round + 1 };
        // Cancelled meanwhile: the run closes as a cancelled run, with what it has.
        runStatus = 'cancelled';
      }
    }
    const { coverage, degraded } = assessCoverage(manifest, read.outcomes, reconciliation);
    const decision = decideStatus(manifest, coverage, reconciliation);
    const status = finalStatus(runStatus, task, decision);
    const error = closingError(task, status, decision);
    const closing = { ...ref, round, goal: read.goal, manifest, request: read.synthesis, coverage, reconciliation };
    const answer = await composeAnswer(deps, status, task, closing);
    await deps.ledger.finishRun({ ...ref, status, answer, ...(error ? { error } : {}) });
    deps.logger.info('run finished', { status, complete: coverage.complete, round });
    emitMetrics(
      deps.metrics,
      status,
      coverage,
      degraded,
      read.outcomes.map((o) => o.state),
      task,
    );
    return { next: 'finish', ...ref, round, status };
  };
