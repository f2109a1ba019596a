/**
 * The model synthesizer a deployment may declare (on the registry, or per output schema): its
 * prompt and model settings, the request it sends through the same model adapters the workers
 * use (offline, Bedrock Converse), and the reply it expects, the `record_synthesis` tool call
 * whose input is a `SynthesisOutput`. What the output says is checked by the audit
 * (lib/domain/synthesis.ts), never by the model.
 */
import { z } from 'zod';
import { SynthesisOutput, type AuditProblem, type Conflict } from '../contract';
import { promptFinding, type Finding, type InputBudget } from '../domain';
import { WorkerDefinitionError } from './errors';
import { assistantTurn, toolResultsTurn, toolSpec, userText, type ConverseRequest, type ConverseResult, type ModelMessage } from './model';
import { promptJson, type OfflineScript } from './models/offline';

/** The `task` of a synthesis call: the offline model answers it with the synthesizer's script. */
export const SYNTHESIS_TASK = 'synthesize';
/** The tool the synthesizer must call with its output. */
export const SYNTHESIS_TOOL = 'record_synthesis';

const PARTIAL_NOTE =
  'This is a partial synthesis of one group of the findings: write as few claims as the findings allow, and no gap claims; ' +
  'the final answer is written from the partial syntheses.';

const DEFAULT_SYSTEM =
  'You write the answer to a research goal from the findings you are given, as claims. Every claim cites the ids of the findings it rests on. ' +
  'Cite only ids you were given. Cite or set aside (with a reason) every finding. Address every question that has findings. ' +
  'For each conflict, write one claim that cites every side. For a missing question, write a claim of kind "gap" naming it, and do not answer it. ' +
  `Reply by calling ${SYNTHESIS_TOOL}.`;

/**
 * A model synthesizer as a deployment declares it.
 *
 * @example
 * defineSynthesizer({ system: 'You brief a sales team…', model: 'anthropic.claude-3-haiku-20240307-v1:0', inputBudget: { maxChars: 60_000 } });
 */
export interface SynthesizerDefinition {
  /** The system prompt; a default that states the audit's rules without it. */
  readonly system?: string;
  /** The model, when not the deployment's default; a request's `synthesis.model` overrides it. */
  readonly model?: string;
  /** The reply's token limit. */
  readonly maxTokens?: number;
  /** How much one input may hold; past it, synthesis runs as a tree. Without one, every run is one synthesis. */
  readonly inputBudget?: InputBudget;
  /** The offline model's answer to a synthesis call (tests, examples, the local cloud). */
  readonly offlineScript?: OfflineScript;
}

/** A declared synthesizer. */
export interface Synthesizer {
  readonly system: string;
  readonly model?: string;
  readonly maxTokens?: number;
  readonly inputBudget: InputBudget;
  readonly offlineScripts: Readonly<Record<string, OfflineScript>>;
}

const positive = (value: number | undefined) => value === undefined || (Number.isInteger(value) && value >= 1);

/**
 * Declares a model synthesizer, checking its settings.
 *
 * @example
 * createRegistry(kinds, { synthesizer: defineSynthesizer({ offlineScript: faithfulSynthesis }) });
 */
export const defineSynthesizer = (definition: SynthesizerDefinition): Synthesizer => {
  const budget = definition.inputBudget ?? {};
  if (!positive(budget.maxFindings) || !positive(budget.maxChars) || !positive(definition.maxTokens)) {
    throw new WorkerDefinitionError('synthesizer', 'inputBudget.maxFindings, inputBudget.maxChars and maxTokens must be positive whole numbers');
  }
  if (definition.system !== undefined && definition.system.trim() === '') throw new WorkerDefinitionError('synthesizer', 'system must not be empty');
  const offlineScripts: Record<string, OfflineScript> = definition.offlineScript ? { [SYNTHESIS_TASK]: definition.offlineScript } : {};
  return Object.freeze({
    system: definition.system ?? DEFAULT_SYSTEM,
    ...(definition.model === undefined ? {} : { model: definition.model }),
    ...(definition.maxTokens === undefined ? {} : { maxTokens: definition.maxTokens }),
    inputBudget: Object.freeze({ ...budget }),
    offlineScripts: Object.freeze(offlineScripts),
  });
};

/** What a synthesizer is told besides its findings: the goal, the questions and the coverage. */
export interface SynthesisContext {
  readonly goal: string;
  readonly questions: readonly { readonly id: string; readonly text?: string | undefined }[];
  readonly missingQuestions: readonly string[];
  /** Gaps no re-check settled, in words (`B.g1: unconfirmed_empty`). */
  readonly unsettledGaps: readonly string[];
  /** `degradedReason` of the coverage. */
  readonly degraded: readonly string[];
}

/**
 * The prompt's JSON: goal, questions, coverage, conflicts and findings. The offline scripts read it back with `promptJson`.
 *
 * @example
 * synthesisPromptJson(context, findings, conflicts).findings[0].id // 'A#1'
 */
export const synthesisPromptJson = (context: SynthesisContext, findings: readonly Finding[], conflicts: readonly Conflict[], part: SynthesisPart = WHOLE) => ({
  // A partial synthesis of a tree is read by the level above it, not by people: it says nothing of what is missing.
  part,
  goal: context.goal,
  questions: context.questions,
  coverage: { missingQuestions: context.missingQuestions, unsettledGaps: context.unsettledGaps, degraded: context.degraded },
  conflicts,
  findings: findings.map(promptFinding),
});

/**
 * Where one synthesis sits in a tree: its level and group, and whether its claims are the answer.
 *
 * @example
 * const part: SynthesisPart = { level: 1, group: 2, final: false }; // the second partial synthesis
 */
export interface SynthesisPart {
  readonly level: number;
  readonly group: number;
  readonly final: boolean;
}

const WHOLE: SynthesisPart = { level: 1, group: 1, final: true };

const outputTool = toolSpec(SYNTHESIS_TOOL, 'Record the answer as claims citing finding ids, and the findings set aside.', SynthesisOutput);

/**
 * The first synthesis request of one input.
 *
 * @example
 * const request = synthesisRequest(synthesizer, context, findings, conflicts);
 */
export const synthesisRequest = (
  synthesizer: Synthesizer,
  context: SynthesisContext,
  findings: readonly Finding[],
  conflicts: readonly Conflict[],
  part: SynthesisPart = WHOLE,
): ConverseRequest & { messages: ModelMessage[] } => ({
  task: SYNTHESIS_TASK,
  system: part.final ? synthesizer.system : `${synthesizer.system}\n${PARTIAL_NOTE}`,
  messages: [userText(JSON.stringify(synthesisPromptJson(context, findings, conflicts, part)))],
  tools: [outputTool],
  toolChoice: { tool: SYNTHESIS_TOOL },
  ...(synthesizer.maxTokens === undefined ? {} : { maxTokens: synthesizer.maxTokens }),
});

/**
 * The repair request: the first conversation, the reply, and the audit's problems as the tool's error result.
 *
 * @example
 * const again = repairRequest(first, reply, audit.problems);
 */
export const repairRequest = (first: ReturnType<typeof synthesisRequest>, reply: ConverseResult, problems: readonly AuditProblem[]): ConverseRequest => {
  const call = reply.toolCalls.find((c) => c.name === SYNTHESIS_TOOL);
  const feedback = { problems, instruction: 'Fix every problem and call the tool again with the whole corrected output.' };
  const turn = call ? toolResultsTurn([{ toolCallId: call.id, content: feedback, isError: true }]) : userText(JSON.stringify(feedback));
  return { ...first, messages: [...first.messages, assistantTurn(reply), turn] };
};

/**
 * The output in a reply, parsed: the `record_synthesis` call's input, or why there is none.
 *
 * @example
 * const parsed = outputOf(reply); // { ok: true, output } | { ok: false, message: 'claims.0.text: …' }
 */
export const outputOf = (reply: ConverseResult): { ok: true; output: SynthesisOutput } | { ok: false; message: string } => {
  const call = reply.toolCalls.find((c) => c.name === SYNTHESIS_TOOL);
  if (call === undefined) return { ok: false, message: `the reply did not call ${SYNTHESIS_TOOL} (stop reason ${reply.stopReason})` };
  const parsed = SynthesisOutput.safeParse(call.input);
  if (parsed.success) return { ok: true, output: parsed.data };
  return { ok: false, message: parsed.error.issues.map((issue) => `${issue.path.map(String).join('.') || '(output)'}: ${issue.message}`).join('; ') };
};

const PromptShape = z.object({
  part: z.object({ final: z.boolean() }).default({ final: true }),
  questions: z.array(z.object({ id: z.string(), text: z.string().optional() })).default([]),
  coverage: z.object({ missingQuestions: z.array(z.string()).default([]) }).default({ missingQuestions: [] }),
  conflicts: z.array(z.object({ key: z.string(), sides: z.array(z.object({ findings: z.array(z.object({ findingId: z.string() })) })) })).default([]),
  findings: z.array(z.object({ id: z.string(), questionIds: z.array(z.string()).default([]), statement: z.string().optional() })).default([]),
});

/**
 * The prompt JSON of a synthesis request (the first user turn), as the offline scripts read it.
 *
 * @example
 * synthesisPromptOf(request).findings.map((f) => f.id) // ['A#1', 'B#1']
 */
export const synthesisPromptOf = (request: Parameters<OfflineScript>[0]) => {
  const first = request.messages.find((m) => m.role === 'user');
  return PromptShape.parse(promptJson({ ...request, messages: first ? [first] : [] }));
};

/**
 * A faithful synthesis, computed from the prompt: a claim per conflict citing every side, a
 * claim per question citing each of its findings, one for findings of no question, and a gap
 * claim per missing question. It is what an offline synthesizer answers, and what a scripted
 * model that does its job writes; tests derive their failing scripts from it.
 *
 * @example
 * faithfulOutput(synthesisPromptOf(request)).claims.at(-1) // { text: 'q3 is missing: …', kind: 'gap', questionIds: ['q3'], cites: [] }
 */
export const faithfulOutput = (prompt: ReturnType<typeof synthesisPromptOf>): SynthesisOutput => {
  const missing = new Set(prompt.coverage.missingQuestions);
  const words = (ids: readonly string[]) =>
    prompt.findings
      .filter((f) => ids.includes(f.id))
      .map((f) => (f.statement ?? f.id).replace(/[.\s]+$/, ''))
      .join('; ');
  const conflictClaims = prompt.conflicts.map((conflict) => {
    const cites = conflict.sides.flatMap((side) => side.findings.map((f) => f.findingId));
    return { text: `The sources disagree on ${conflict.key}: ${words(cites)}.`, cites, kind: 'finding' as const };
  });
  const questionIds = [...new Set([...prompt.questions.map((q) => q.id), ...prompt.findings.flatMap((f) => f.questionIds)])];
  const byQuestion = questionIds.flatMap((q) => {
    const own = prompt.findings.filter((f) => f.questionIds.includes(q)).map((f) => f.id);
    if (own.length === 0) return [];
    const kind = missing.has(q) ? ('gap' as const) : ('finding' as const);
    // A partial's claim leaves out the question's id: the final names it, so a tree's answer reads as one synthesis would.
    return [{ text: prompt.part.final ? `${q}: ${words(own)}.` : `${words(own)}.`, cites: own, kind, questionIds: [q] }];
  });
  const orphans = prompt.findings.filter((f) => f.questionIds.length === 0).map((f) => f.id);
  const gaps = [...missing]
    .filter(() => prompt.part.final)
    .filter((q) => !prompt.findings.some((f) => f.questionIds.includes(q)))
    .map((q) => ({ text: `${q} is missing: no finding answers it.`, cites: [], kind: 'gap' as const, questionIds: [q] }));
  return {
    claims: [...conflictClaims, ...byQuestion, ...(orphans.length > 0 ? [{ text: words(orphans), cites: orphans, kind: 'finding' as const }] : []), ...gaps],
    setAside: [],
  };
};

/**
 * The offline script of a faithful synthesizer: it answers every synthesis call (first, repair,
 * each level of a tree) with {@link faithfulOutput}.
 *
 * @example
 * defineSynthesizer({ offlineScript: faithfulSynthesis });
 */
export const faithfulSynthesis: OfflineScript = (request) => ({
  toolCalls: [{ id: 'synthesis-1', name: SYNTHESIS_TOOL, input: faithfulOutput(synthesisPromptOf(request)) }],
});
