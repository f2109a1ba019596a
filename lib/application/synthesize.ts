/**
 * The closing path's synthesis: the answer's findings under stable ids, their conflicts, and,
 * when the request asks for it and the deployment declares a synthesizer, the model synthesis,
 * audited, repaired once, or replaced by the deterministic merge with the reason kept. Every call
 * is reserved from the run's budget first, and the result is stored before the run is finished,
 * so a retried Reconcile neither pays twice nor answers differently.
 */
import type { AnswerSynthesis, Conflict, Coverage, Manifest, SynthesisAudit, SynthesisRequest } from '../contract';
import { SETTLED_GAP_STATUSES } from '../contract';
import {
  auditSynthesis,
  findConflicts,
  invalidOutputAudit,
  listedFinding,
  numberFindings,
  synthesisInputs,
  synthesizeTree,
  type Finding,
  type NodeResult,
  type Reconciliation,
  type SynthesisNode,
} from '../domain';
import type { Ledger } from '../ledger';
import { outputOf, repairRequest, synthesisRequest, type ModelProvider, type SynthesisContext, type Synthesizer, type WorkerRegistry } from '../workers';

/** What the closing path's synthesis is built from. */
export interface SynthesisDeps {
  readonly ledger: Pick<Ledger, 'reserveSynthesisCall' | 'readSynthesis' | 'recordSynthesis'>;
  readonly registry: WorkerRegistry;
  readonly models: ModelProvider;
}

/** The closing a synthesis belongs to. */
export interface SynthesisClosing {
  readonly tenantId: string;
  readonly runId: string;
  readonly round: number;
  readonly goal: string;
  readonly manifest: Manifest;
  readonly request: SynthesisRequest | undefined;
  readonly coverage: Coverage;
  readonly reconciliation: Reconciliation;
}

/**
 * The run's `ok` findings, numbered per subtask (`A#1`, `A#2`), with what each claims.
 *
 * @example
 * runFindings(registry, reconciliation).map((f) => f.id) // ['A#1', 'A#2', 'B#1', 'D#1', 'E#1']
 */
export const runFindings = (registry: WorkerRegistry, reconciliation: Reconciliation): Finding[] =>
  synthesisInputs(reconciliation).flatMap(({ subtask, outcome }) =>
    numberFindings(
      { subtaskId: outcome.subtaskId, worker: subtask.worker, questionIds: subtask.questionIds },
      registry.get(subtask.worker).findingParts(outcome.findings),
    ),
  );

/** The coverage's conflicts, added only when there are some, so answers without any read as before. */
export const withConflicts = (coverage: Coverage, conflicts: readonly Conflict[]): Coverage =>
  conflicts.length === 0 ? coverage : { ...coverage, conflicts: [...conflicts] };

const contextOf = (closing: SynthesisClosing): SynthesisContext => ({
  goal: closing.goal,
  questions: (closing.manifest.questions ?? []).map((q) => ({ id: q.id, ...(q.text === undefined ? {} : { text: q.text }) })),
  missingQuestions: closing.coverage.missingQuestions,
  unsettledGaps: closing.coverage.gaps
    .filter((gap) => !SETTLED_GAP_STATUSES.includes(gap.status))
    .map((gap) => `${gap.recheckSubtaskId ?? gap.subtaskId ?? 'unassigned'}: ${gap.status}`),
  degraded: closing.coverage.degradedReason,
});

/** Why a synthesis stopped short: the fallback's reason and words. */
class Stop extends Error {
  constructor(
    readonly reason: NonNullable<AnswerSynthesis['fallback']>['reason'],
    message: string,
    readonly audit?: SynthesisAudit,
  ) {
    super(message);
  }
}

const errorName = (error: unknown): string => (error instanceof Error ? error.name : typeof error);

/** One synthesizer: every node of its tree is a call, audited, and repaired once. */
const runSynthesizer = async (
  deps: SynthesisDeps,
  closing: SynthesisClosing,
  synthesizer: Synthesizer,
  findings: readonly Finding[],
  conflicts: readonly Conflict[],
) => {
  const request = closing.request!;
  const context = contextOf(closing);
  const model = deps.models.select({ model: request.model ?? synthesizer.model, offlineScripts: synthesizer.offlineScripts });
  let calls = 0;
  let attempts = 0;
  const call = async (converse: Parameters<typeof model.converse>[0]) => {
    calls += 1;
    try {
      await deps.ledger.reserveSynthesisCall({
        tenantId: closing.tenantId,
        runId: closing.runId,
        round: closing.round,
        call: calls,
        estimatedCostPerCall: request.budget.estimatedCostPerCall,
        modelCalls: request.budget.modelCalls,
      });
    } catch (error) {
      if (errorName(error) === 'BudgetExhausted') throw new Stop('budget', `the budget could not pay for synthesis call ${calls}: ${(error as Error).message}`);
      throw error;
    }
    try {
      return await model.converse(converse);
    } catch (error) {
      throw new Stop('model_failed', `synthesis call ${calls} failed: ${errorName(error)}`);
    }
  };
  const node = async (at: SynthesisNode): Promise<NodeResult> => {
    const input = { runId: closing.runId, findings: at.findings, conflicts: at.conflicts, missingQuestions: context.missingQuestions };
    const first = synthesisRequest(synthesizer, context, at.findings, at.conflicts, { level: at.level, group: at.group, final: at.final });
    const reply = await call(first);
    const parsed = outputOf(reply);
    const audit = parsed.ok ? auditSynthesis(input, parsed.output) : invalidOutputAudit(at.findings.length, parsed.message);
    if (parsed.ok) attempts += 1;
    if (audit.clean && parsed.ok) return { ok: true, output: parsed.output };
    // One repair, with the problems fed back; what it returns goes on, and the final audit decides.
    let again;
    try {
      again = outputOf(await call(repairRequest(first, reply, audit.problems)));
    } catch (error) {
      if (error instanceof Stop && error.reason === 'budget' && parsed.ok) return { ok: true, output: parsed.output };
      throw error;
    }
    if (again.ok) {
      attempts += 1;
      return { ok: true, output: again.output };
    }
    if (parsed.ok) return { ok: true, output: parsed.output };
    throw new Stop('model_failed', `the synthesizer's output failed its schema twice: ${again.message}`, invalidOutputAudit(at.findings.length, again.message));
  };
  const tree = await synthesizeTree({ runId: closing.runId, findings, conflicts }, synthesizer.inputBudget, node);
  if (!tree.ok) throw new Stop('model_failed', tree.reason);
  return { output: tree.output, levels: tree.levels, attempts, model: model.id };
};

/** A synthesis that fell back to the merge, keeping what it had. */
const fallback = (
  findings: readonly Finding[],
  reason: NonNullable<AnswerSynthesis['fallback']>['reason'],
  message: string,
  kept?: Partial<AnswerSynthesis>,
): AnswerSynthesis => ({
  by: 'merge',
  findings: findings.map(listedFinding),
  claims: kept?.claims ?? [],
  setAside: kept?.setAside ?? [],
  audit: kept?.audit ?? { clean: false, findings: findings.length, cited: 0, setAside: 0, problems: [] },
  attempts: kept?.attempts ?? 0,
  levels: kept?.levels ?? 0,
  ...(kept?.model === undefined ? {} : { model: kept.model }),
  fallback: { reason, message },
});

/**
 * Synthesizes a closing (no stored result yet): the model synthesis when it audits clean after at
 * most one repair per call, else the merge with the reason and the failed audit kept.
 */
const synthesizeOnce = async (deps: SynthesisDeps, closing: SynthesisClosing, findings: readonly Finding[], conflicts: readonly Conflict[]) => {
  const kinds = [...new Set(findings.map((f) => f.worker))];
  const synthesizers = [...new Set(kinds.map((kind) => deps.registry.synthesizerFor(kind)))];
  const synthesizer = synthesizers[0] ?? (kinds.length === 0 ? deps.registry.synthesizerFor(deps.registry.kinds()[0] ?? '') : undefined);
  if (synthesizer === undefined || synthesizers.length > 1) {
    const why = synthesizer === undefined ? 'the deployment declares no synthesizer' : 'the findings belong to output schemas with different synthesizers';
    return fallback(findings, 'no_synthesizer', why);
  }
  try {
    const { output, levels, attempts, model } = await runSynthesizer(deps, closing, synthesizer, findings, conflicts);
    const audit = auditSynthesis({ runId: closing.runId, findings, conflicts, missingQuestions: closing.coverage.missingQuestions }, output);
    const kept = { claims: output.claims, setAside: output.setAside, audit, attempts, levels, model };
    if (!audit.clean) return fallback(findings, 'audit_failed', `the audit found ${audit.problems.length} problem(s) after the repair`, kept);
    return { by: 'model' as const, findings: findings.map(listedFinding), ...kept };
  } catch (error) {
    if (error instanceof Stop) return fallback(findings, error.reason, error.message, error.audit ? { audit: error.audit } : {});
    throw error;
  }
};

/**
 * The closing's synthesis: the stored one when an earlier attempt of this closing stored it,
 * else synthesized now and stored (first writer wins) before the caller finishes the run.
 *
 * @example
 * const synthesis = await closingSynthesis(deps, closing); // { by: 'model', claims, audit: { clean: true, … }, … }
 */
export const closingSynthesis = async (deps: SynthesisDeps, closing: SynthesisClosing): Promise<AnswerSynthesis> => {
  const ref = { tenantId: closing.tenantId, runId: closing.runId, round: closing.round };
  const stored = await deps.ledger.readSynthesis(ref);
  if (stored !== undefined) return stored;
  const findings = runFindings(deps.registry, closing.reconciliation);
  const synthesis = await synthesizeOnce(deps, closing, findings, findConflicts(findings));
  return deps.ledger.recordSynthesis(ref, synthesis);
};

/**
 * The answer's text from its synthesis: the claims when the model's synthesis stands, else the
 * merge's sentence and why synthesis fell back. The coverage statement is appended by the caller.
 *
 * @example
 * synthesisText(synthesis, merged.text) // 'q1: Pro rose to $59. … q3 is missing: no finding answers it.'
 */
export const synthesisText = (synthesis: AnswerSynthesis, mergedText: string): string => {
  if (synthesis.by === 'model') return synthesis.claims.map((claim) => claim.text).join(' ');
  return [mergedText, `Synthesis fell back to the merge: ${synthesis.fallback?.message ?? 'no synthesis'}.`].filter(Boolean).join(' ');
};

/** The closing's answer parts when the request asked for synthesis. */
export interface SynthesizedAnswer {
  readonly text: string;
  readonly coverage: Coverage;
  readonly synthesis: AnswerSynthesis;
}

/**
 * The answer of a succeeded run whose request asked for synthesis: its text from the synthesis
 * (or the merge it fell back to), the coverage with `synthesisAuditedClean`, and the synthesis.
 *
 * @example
 * const { text, coverage, synthesis } = await synthesizedAnswer(deps, closing, merged.text);
 */
export const synthesizedAnswer = async (deps: SynthesisDeps, closing: SynthesisClosing, mergedText: string): Promise<SynthesizedAnswer> => {
  const synthesis = await closingSynthesis(deps, closing);
  const coverage = { ...closing.coverage, synthesisAuditedClean: synthesis.by === 'model' && synthesis.audit.clean };
  return { text: [synthesisText(synthesis, mergedText), coverage.statement].filter(Boolean).join(' '), coverage, synthesis };
};
