/**
 * Synthesis you can audit, the pure part: the run's findings under stable ids, the conflicts
 * between them, and the audit of a synthesizer's output against them. The audit is computed
 * only from the output and the findings, never by a model, so it can be trusted whoever wrote
 * the answer (docs/workers.md, "Synthesis").
 */
import type { AuditProblem, Conflict, FindingId, SynthesisAudit, SynthesisFinding, SynthesisOutput } from '../contract';

/** What a kind says one of its findings claims: a value for a key (`vantage.price.pro` = 49). */
export interface FindingClaim {
  readonly key: string;
  readonly value: string | number | boolean;
}

/** One finding as a kind splits its output (`items`), before it has an id. */
export interface FindingPart {
  /** What it says, in words, when the kind states it. */
  readonly statement?: string | undefined;
  /** The ids of the records it rests on. */
  readonly evidence: readonly string[];
  /** The part of the output it is (what the synthesizer reads). */
  readonly content: unknown;
  /** What it claims, for conflicts (the kind's `claims`). */
  readonly claims: readonly FindingClaim[];
}

/** One `ok` finding of a run, under its stable id `<subtaskId>#<n>`. */
export interface Finding extends FindingPart {
  readonly id: FindingId;
  readonly subtaskId: string;
  readonly worker: string;
  /** The questions of the subtask that produced it. */
  readonly questionIds: readonly string[];
}

/**
 * Numbers one subtask's findings in order: `A#1`, `A#2`, … The order is the kind's own (its
 * `items`), which is fixed by the recorded outcome, so a finding keeps its id across retries of
 * Reconcile.
 *
 * @example
 * numberFindings({ subtaskId: 'A', worker: 'scout-pricing', questionIds: ['q1'] }, parts).map((f) => f.id) // ['A#1', 'A#2']
 */
export const numberFindings = (
  subtask: { readonly subtaskId: string; readonly worker: string; readonly questionIds: readonly string[] },
  parts: readonly FindingPart[],
): Finding[] => parts.map((part, index) => ({ ...part, id: `${subtask.subtaskId}#${index + 1}`, ...subtask }));

/** A finding as the answer lists it (no content, no claims). */
export const listedFinding = (finding: Finding): SynthesisFinding => ({
  id: finding.id,
  subtaskId: finding.subtaskId,
  questionIds: [...finding.questionIds],
  ...(finding.statement === undefined ? {} : { statement: finding.statement }),
  evidence: [...finding.evidence],
});

const valueKey = (value: FindingClaim['value']): string => `${typeof value}:${String(value)}`;

/**
 * The conflicts among findings: for each key that two findings claim different values for, one
 * conflict with a side per value, in the order the findings come. Findings that agree are no
 * conflict, whichever subtasks (overlaps, re-checks, hedge copies) they come from.
 *
 * @example
 * // A#1 claims price 49, E#1 claims price 59:
 * findConflicts([a1, e1]) // [{ key: 'price', sides: [{ value: 49, … }, { value: 59, … }] }]
 */
export const findConflicts = (findings: readonly Finding[]): Conflict[] => {
  const byKey = new Map<string, Map<string, { value: FindingClaim['value']; findings: Finding[] }>>();
  for (const finding of findings) {
    for (const claim of finding.claims) {
      const sides = byKey.get(claim.key) ?? new Map<string, { value: FindingClaim['value']; findings: Finding[] }>();
      byKey.set(claim.key, sides);
      const side = sides.get(valueKey(claim.value)) ?? { value: claim.value, findings: [] };
      sides.set(valueKey(claim.value), side);
      if (!side.findings.includes(finding)) side.findings.push(finding);
    }
  }
  return [...byKey.entries()]
    .filter(([, sides]) => sides.size > 1)
    .map(([key, sides]) => ({
      key,
      sides: [...sides.values()].map((side) => ({
        value: side.value,
        findings: side.findings.map((f) => ({ findingId: f.id, subtaskId: f.subtaskId, evidence: [...f.evidence] })),
      })),
    }));
};

/** What the audit checks an output against. */
export interface AuditInput {
  /** The run whose findings these are; a citation `<otherRunId>/<findingId>` is foreign. */
  readonly runId: string;
  /** The `ok` findings synthesis was given. */
  readonly findings: readonly Finding[];
  readonly conflicts: readonly Conflict[];
  /** The coverage's missing questions. */
  readonly missingQuestions: readonly string[];
}

/** A citation as written, resolved: a finding of this run, another run's, or nothing. */
type Resolved = { readonly kind: 'finding'; readonly finding: Finding } | { readonly kind: 'foreign'; readonly runId: string } | { readonly kind: 'unknown' };

/**
 * Resolves one citation. A finding is cited by its id (`A#1`), or by its run-qualified id
 * (`<runId>/A#1`), the form an id takes outside its run: a qualified id of another run is foreign.
 */
const resolver = (input: AuditInput) => {
  const byId = new Map(input.findings.map((f) => [f.id, f]));
  return (raw: string): Resolved => {
    const slash = raw.lastIndexOf('/');
    const runId = slash < 0 ? input.runId : raw.slice(0, slash);
    if (runId !== input.runId) return { kind: 'foreign', runId };
    const finding = byId.get(slash < 0 ? raw : raw.slice(slash + 1));
    return finding === undefined ? { kind: 'unknown' } : { kind: 'finding', finding };
  };
};

const list = (ids: readonly string[]): string => ids.join(', ');

/** Citation problems of each claim, and the findings each claim resolves to. */
const claimCitations = (output: SynthesisOutput, resolve: (raw: string) => Resolved) => {
  const problems: AuditProblem[] = [];
  const cited = output.claims.map((claim, index) => {
    const found = new Set<Finding>();
    for (const raw of new Set(claim.cites)) {
      const resolved = resolve(raw);
      switch (resolved.kind) {
        case 'finding':
          found.add(resolved.finding);
          break;
        case 'foreign':
          problems.push({
            code: 'foreign_citation',
            claim: index,
            findingId: raw,
            runId: resolved.runId,
            message: `claim ${index} cites ${raw}, a finding of another run (${resolved.runId})`,
          });
          break;
        case 'unknown':
          problems.push({
            code: 'unknown_citation',
            claim: index,
            findingId: raw,
            message: `claim ${index} cites ${raw}, which no ok finding of this run has`,
          });
          break;
        default: {
          const never: never = resolved;
          throw new Error(`unhandled citation ${String(never)}`);
        }
      }
    }
    return found;
  });
  return { problems, cited };
};

/** A claim that answers a missing question (or says a question is missing that is not). */
const questionProblems = (output: SynthesisOutput, cited: readonly Set<Finding>[], missing: ReadonlySet<string>): AuditProblem[] =>
  output.claims.flatMap((claim, index): AuditProblem[] => {
    const citedQuestions = [...cited[index]!].map((f) => f.questionIds);
    if (claim.kind === 'gap') {
      const notMissing = (claim.questionIds ?? []).filter((q) => !missing.has(q));
      if (notMissing.length > 0 || (claim.questionIds ?? []).length === 0) {
        const what = notMissing.length > 0 ? `names ${list(notMissing)}, which the coverage does not list as missing` : 'names no missing question';
        return [{ code: 'gap_not_missing', claim: index, questionIds: notMissing, message: `gap claim ${index} ${what}` }];
      }
      return [];
    }
    if (claim.cites.length === 0) {
      const declared = (claim.questionIds ?? []).filter((q) => missing.has(q));
      const uncited: AuditProblem = { code: 'uncited_claim', claim: index, message: `claim ${index} cites no finding` };
      if (declared.length === 0) return [uncited];
      return [
        uncited,
        {
          code: 'answers_missing_question',
          claim: index,
          questionIds: declared,
          message: `claim ${index} answers ${list(declared)}, which the coverage lists as missing, from no finding`,
        },
      ];
    }
    // The claim's own questions that are missing, answered without a finding of theirs…
    const declared = (claim.questionIds ?? []).filter((q) => missing.has(q) && !citedQuestions.some((qs) => qs.includes(q)));
    // …or a claim resting only on findings of missing questions (their other subtasks failed).
    const onlyMissing = citedQuestions.length > 0 && citedQuestions.every((qs) => qs.length > 0 && qs.every((q) => missing.has(q)));
    const questions = [...new Set([...declared, ...(onlyMissing ? citedQuestions.flat() : [])])];
    if (questions.length === 0) return [];
    return [
      {
        code: 'answers_missing_question',
        claim: index,
        questionIds: questions,
        message: `claim ${index} answers ${list(questions)}, which the coverage lists as missing, as if it were not (a gap claim says it is missing)`,
      },
    ];
  });

/**
 * The audit of a synthesizer's output: every citation resolves to an `ok` finding of this run;
 * every finding is cited or set aside with a reason; every question with findings (not all set
 * aside) is addressed by a claim citing one of them; no finding claim answers a missing question
 * (a `gap` claim says it is missing, and may cite that question's partial findings); and each
 * conflict is addressed by one claim citing every side. Problems name the ids; `clean` holds
 * exactly when there are none.
 *
 * @example
 * auditSynthesis(input, { claims: [{ text: '…', cites: ['A#1', 'Z#9'], kind: 'finding' }], setAside: [] }).problems
 * // [{ code: 'unknown_citation', claim: 0, findingId: 'Z#9', … }, { code: 'dropped_finding', findingId: 'B#1', … }]
 */
export const auditSynthesis = (input: AuditInput, output: SynthesisOutput): SynthesisAudit => {
  const resolve = resolver(input);
  const missing = new Set(input.missingQuestions);
  const { problems, cited } = claimCitations(output, resolve);
  const citedIds = new Set(cited.flatMap((found) => [...found].map((f) => f.id)));
  const setAsideIds = new Set<string>();
  for (const entry of output.setAside) {
    const resolved = resolve(entry.findingId);
    if (resolved.kind === 'finding') setAsideIds.add(resolved.finding.id);
    else
      problems.push({
        code: 'unknown_set_aside',
        findingId: entry.findingId,
        message: `setAside names ${entry.findingId}, which no ok finding of this run has`,
      });
  }
  for (const finding of input.findings) {
    if (!citedIds.has(finding.id) && !setAsideIds.has(finding.id)) {
      problems.push({
        code: 'dropped_finding',
        findingId: finding.id,
        message: `finding ${finding.id} (subtask ${finding.subtaskId}) is neither cited nor set aside`,
      });
    }
  }
  problems.push(...questionProblems(output, cited, missing));
  const questions = [...new Set(input.findings.flatMap((f) => f.questionIds))].filter((q) => !missing.has(q));
  for (const question of questions) {
    const own = input.findings.filter((f) => f.questionIds.includes(question));
    if (own.every((f) => setAsideIds.has(f.id) && !citedIds.has(f.id))) continue;
    if (!own.some((f) => citedIds.has(f.id))) {
      const ids = own.map((f) => f.id);
      problems.push({
        code: 'unaddressed_question',
        questionId: question,
        findingIds: ids,
        message: `question ${question} has findings (${list(ids)}) that no claim cites`,
      });
    }
  }
  for (const conflict of input.conflicts) {
    const sides = conflict.sides.map((side) => new Set(side.findings.map((f) => f.findingId)));
    const addressed = cited.some((found) => sides.every((side) => [...found].some((f) => side.has(f.id))));
    if (!addressed) {
      const ids = conflict.sides.flatMap((side) => side.findings.map((f) => f.findingId));
      problems.push({
        code: 'unaddressed_conflict',
        key: conflict.key,
        findingIds: ids,
        message: `no claim addresses the conflict on ${conflict.key} by citing every side (${list(ids)})`,
      });
    }
  }
  const setAside = [...setAsideIds].filter((id) => !citedIds.has(id)).length;
  return { clean: problems.length === 0, findings: input.findings.length, cited: citedIds.size, setAside, problems };
};

/** The audit of an output that failed its schema: nothing it says can be checked. */
export const invalidOutputAudit = (findings: number, message: string): SynthesisAudit => ({
  clean: false,
  findings,
  cited: 0,
  setAside: 0,
  problems: [{ code: 'invalid_output', message }],
});
