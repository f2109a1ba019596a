import { z } from 'zod';
import { QuestionId, SubtaskId } from './run-request';

/**
 * Synthesis you can audit: a model writes the answer as claims that cite findings, and tessera
 * (never a model) checks every claim against the findings it was given (docs/workers.md, "Synthesis").
 */

/**
 * A finding's id, stable within its run: the subtask that produced it and its 1-based position
 * among that subtask's findings (`A#1`, `B.g1#3`). Subtask ids cannot contain `#`.
 */
export const FindingId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}#[1-9][0-9]{0,8}$/, 'must be <subtaskId>#<n>, n from 1 (A#1, B.g1#3)')
  .describe('A finding id: <subtaskId>#<n>, n counting from 1 within that subtask (A#1, B.g1#3).');
export type FindingId = z.infer<typeof FindingId>;

/** One claim of a synthesized answer, as the synthesizer wrote it. Citations are checked by the audit, not here. */
export const SynthesisClaim = z
  .object({
    text: z.string().min(1).max(4000).describe('The claim in words.'),
    /** The finding ids the claim rests on, as written; the audit resolves each. */
    cites: z.array(z.string().max(200)).max(1000).default([]).describe('The finding ids the claim rests on, as written; the audit resolves each.'),
    /** The questions the claim answers, when the synthesizer says. */
    questionIds: z.array(z.string().max(64)).max(200).optional().describe('The questions the claim answers, when the synthesizer says.'),
    /**
     * `gap`: the claim says what is missing (a question the coverage lists as missing); it cites
     * nothing. `finding` (the default): it states something, and must cite what it rests on.
     */
    kind: z
      .enum(['finding', 'gap'])
      .default('finding')
      .describe('finding: states something and cites what it rests on; gap: says what is missing (a missing question), citing nothing.'),
  })
  .describe('One claim of a synthesized answer, citing the findings it rests on.');
export type SynthesisClaim = z.infer<typeof SynthesisClaim>;

/** A finding the synthesizer chose not to use, and why. */
export const SetAside = z
  .object({
    findingId: z.string().max(200).describe('The finding set aside, as written.'),
    reason: z.string().min(1).max(500).describe('Why it was left out.'),
  })
  .describe('A finding the synthesizer chose not to use, with its reason.');
export type SetAside = z.infer<typeof SetAside>;

/** What a synthesizer returns: the answer as claims, and the findings it set aside. */
export const SynthesisOutput = z
  .object({
    claims: z.array(SynthesisClaim).max(1000).describe('The answer as claims, each citing the findings it rests on.'),
    setAside: z.array(SetAside).max(10_000).default([]).describe('Findings left out, each with its reason.'),
  })
  .describe('What a synthesizer returns: claims with citations, and the findings it set aside.');
export type SynthesisOutput = z.infer<typeof SynthesisOutput>;
export type SynthesisOutputInput = z.input<typeof SynthesisOutput>;

/** One side of a conflict: the findings that claim one value for the key. */
export const ConflictSide = z
  .object({
    value: z.union([z.string(), z.number(), z.boolean()]).describe('The value these findings claim.'),
    findings: z
      .array(
        z.object({
          findingId: FindingId,
          subtaskId: SubtaskId,
          evidence: z.array(z.string()).describe("The finding's evidence ids."),
        }),
      )
      .min(1)
      .describe('The findings that claim this value, with their subtasks and evidence.'),
  })
  .describe('The findings that claim one value for the key.');

/** Two or more `ok` findings claim different values for the same key (a kind's declared `claims`). */
export const Conflict = z
  .object({
    key: z.string().min(1).describe('What the findings claim about (vantage.price.pro).'),
    sides: z.array(ConflictSide).min(2).describe('One side per value claimed, in finding order.'),
  })
  .describe('Ok findings that claim different values for the same key; a synthesized answer must address it with a claim citing every side.');
export type Conflict = z.infer<typeof Conflict>;

const claimIndex = z.int().min(0).describe("The claim's index in claims.");

const message = z.string().describe('The problem in words, naming the ids.');
const written = z.string().describe('The id as the synthesizer wrote it.');
const code = <C extends string>(value: C, what: string) => z.literal(value).describe(what);

/** One problem the audit found. Every problem names the ids it concerns. */
export const AuditProblem = z
  .discriminatedUnion('code', [
    z.object({ code: code('invalid_output', 'The output failed its schema.'), message }).describe('The output failed its schema.'),
    z
      .object({ code: code('unknown_citation', 'A claim cites an id no ok finding of this run has.'), claim: claimIndex, findingId: written, message })
      .describe('A claim cites an id no ok finding of this run has.'),
    z
      .object({
        code: code('foreign_citation', "A claim cites another run's finding."),
        claim: claimIndex,
        findingId: written,
        runId: z.string().describe('The run the id names.'),
        message,
      })
      .describe("A claim cites another run's finding (<runId>/<findingId>)."),
    z
      .object({ code: code('unknown_set_aside', 'setAside names an id no ok finding of this run has.'), findingId: written, message })
      .describe('setAside names an id no ok finding of this run has.'),
    z
      .object({ code: code('dropped_finding', 'A finding neither cited nor set aside.'), findingId: FindingId, message })
      .describe('A finding neither cited nor set aside.'),
    z
      .object({ code: code('uncited_claim', 'A finding claim that cites nothing.'), claim: claimIndex, message })
      .describe('A finding claim that cites nothing it rests on.'),
    z
      .object({
        code: code('unaddressed_question', 'A question with findings that no claim cites.'),
        questionId: QuestionId,
        findingIds: z.array(FindingId).describe("The question's findings."),
        message,
      })
      .describe('A question with findings that no claim cites.'),
    z
      .object({
        code: code('answers_missing_question', 'A finding claim answers a missing question.'),
        claim: claimIndex,
        questionIds: z.array(QuestionId).describe('The missing questions it answers.'),
        message,
      })
      .describe('A finding claim that answers a question the coverage lists as missing, resting on nothing of it.'),
    z
      .object({
        code: code('gap_not_missing', 'A gap claim names a question that is not missing.'),
        claim: claimIndex,
        questionIds: z.array(z.string()).describe('The questions it names that are not missing.'),
        message,
      })
      .describe('A gap claim names a question that is not missing.'),
    z
      .object({
        code: code('unaddressed_conflict', 'A conflict no single claim addresses by citing every side.'),
        key: z.string().describe("The conflict's key."),
        findingIds: z.array(FindingId).describe('The findings of every side.'),
        message,
      })
      .describe('A conflict no single claim addresses by citing every side.'),
  ])
  .describe('One problem the audit found, naming the ids it concerns.');
export type AuditProblem = z.infer<typeof AuditProblem>;

/** The audit of a synthesized answer, computed from the output and the findings, never by a model. */
export const SynthesisAudit = z
  .object({
    clean: z.boolean().describe('True exactly when problems is empty.'),
    findings: z.int().min(0).describe('Ok findings audited.'),
    cited: z.int().min(0).describe('Of those, cited by some claim.'),
    setAside: z.int().min(0).describe('Of those, set aside with a reason (and not cited).'),
    problems: z.array(AuditProblem).describe('Every problem found.'),
  })
  .describe('The audit of a synthesized answer, computed from the output and the findings, never by a model.');
export type SynthesisAudit = z.infer<typeof SynthesisAudit>;

/** Why an answer carries the deterministic merge instead of a synthesized one. */
export const SynthesisFallback = z
  .enum(['audit_failed', 'budget', 'no_synthesizer', 'model_failed'])
  .describe(
    'audit_failed: the audit still found problems after the repair; budget: the run could not pay for synthesis; ' +
      'no_synthesizer: the deployment declares none; model_failed: the model call failed or returned no output.',
  );
export type SynthesisFallback = z.infer<typeof SynthesisFallback>;

/** A finding as the answer lists it: its id, subtask, questions, statement and evidence. */
export const SynthesisFinding = z
  .object({
    id: FindingId,
    subtaskId: SubtaskId,
    questionIds: z.array(QuestionId).describe('The questions of its subtask.'),
    statement: z.string().optional().describe('What it says, when its kind states it in words.'),
    evidence: z.array(z.string()).describe('The ids of the records it rests on.'),
  })
  .describe('A finding as the answer lists it, with its evidence.');
export type SynthesisFinding = z.infer<typeof SynthesisFinding>;

/** The synthesis of an answer, when the request asked for one. */
export const AnswerSynthesis = z
  .object({
    by: z.enum(['model', 'merge']).describe('model: the claims are the answer; merge: the synthesizer fell back to the deterministic merge.'),
    model: z.string().optional().describe('The model that synthesized.'),
    findings: z.array(SynthesisFinding).describe('The ok findings synthesis was given, with their evidence: what claims cite.'),
    claims: z.array(SynthesisClaim).describe('The claims of the answer (those of the failed attempt when by is merge).'),
    setAside: z.array(SetAside).describe('Findings set aside, with their reasons.'),
    audit: SynthesisAudit.describe('The audit of the claims above.'),
    attempts: z.int().min(0).describe('Synthesizer calls that returned an output (the first, the repair, a tree’s partials).'),
    levels: z.int().min(0).describe('1 for one synthesis; more for a tree (groups, partial syntheses, then the final).'),
    fallback: z
      .object({ reason: SynthesisFallback, message: z.string().describe('Why, in words.') })
      .optional()
      .describe('Present when by is merge: why.'),
  })
  .describe('How the answer was synthesized, its claims and its audit.');
export type AnswerSynthesis = z.infer<typeof AnswerSynthesis>;
