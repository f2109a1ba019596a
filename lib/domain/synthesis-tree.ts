/**
 * Synthesis as a tree, for runs with more findings than one synthesizer input holds: the findings
 * are cut into groups that fit, each group is synthesized on its own (a partial synthesis), the
 * partials' claims become the findings of the level above, and so on up to one final synthesis.
 * The final output is then expanded back into the run's own finding ids, so the one audit that
 * decides (`auditSynthesis` over every finding) sees through every level: a finding cited by a
 * partial claim that the final answer cites counts as cited, and what any level set aside stays
 * set aside. A citation counts only for a synthesis that was given the finding (in its group, or
 * through a partial it was given): an id of the run it never saw is rewritten so that the audit
 * names it, so one group cannot hide that another dropped a finding by citing its id. Nothing is
 * lost between levels without the audit naming it.
 */
import type { Conflict, SetAside, SynthesisClaim, SynthesisOutput } from '../contract';
import type { Finding } from './synthesis';

/**
 * How much one synthesizer input may hold: findings, characters of their prompt form, or both
 * (a token estimate divided by the model's characters per token is a character count).
 */
export interface InputBudget {
  readonly maxFindings?: number | undefined;
  readonly maxChars?: number | undefined;
}

/**
 * A finding as a synthesizer reads it: id, questions, statement, evidence and content.
 *
 * @example
 * promptFinding(a1) // { id: 'A#1', questionIds: ['q1'], statement: 'Pro rose to $59', evidence: ['price-2025-05'], content: {…} }
 */
export const promptFinding = (finding: Finding) => ({
  id: finding.id,
  subtaskId: finding.subtaskId,
  questionIds: finding.questionIds,
  ...(finding.statement === undefined ? {} : { statement: finding.statement }),
  evidence: finding.evidence,
  content: finding.content,
});

const sizeOf = (finding: Finding): number => JSON.stringify(promptFinding(finding)).length;

/** True when the findings fit one input. @example fitsInput(findings, { maxFindings: 50 }) */
export const fitsInput = (findings: readonly Finding[], budget: InputBudget): boolean =>
  (budget.maxFindings === undefined || findings.length <= budget.maxFindings) &&
  (budget.maxChars === undefined || findings.reduce((sum, f) => sum + sizeOf(f), 0) <= budget.maxChars);

/**
 * Cuts findings into consecutive groups that each fit the budget (a finding larger than the
 * whole budget goes alone). At least two groups when the findings do not fit one, so every
 * level of a tree is smaller than the one below it.
 *
 * @example
 * groupFindings(tenFindings, { maxFindings: 4 }).map((g) => g.length) // [4, 4, 2]
 */
export const groupFindings = (findings: readonly Finding[], budget: InputBudget): Finding[][] => {
  const groups: Finding[][] = [];
  let current: Finding[] = [];
  for (const finding of findings) {
    if (current.length > 0 && !fitsInput([...current, finding], budget)) {
      groups.push(current);
      current = [];
    }
    current.push(finding);
  }
  if (current.length > 0) groups.push(current);
  return groups;
};

/** One synthesis of the tree: its findings (the run's, or the partials' of the level below) and conflicts. */
export interface SynthesisNode {
  /** 1 for the level over the run's findings; the final synthesis has the highest. */
  readonly level: number;
  /** The group's index within its level, from 1. */
  readonly group: number;
  /** True for the single synthesis whose claims are the answer. */
  readonly final: boolean;
  readonly findings: readonly Finding[];
  readonly conflicts: readonly Conflict[];
}

/** What one synthesis returned: its output, or why there is none (the tree stops there). */
export type NodeResult = { readonly ok: true; readonly output: SynthesisOutput } | { readonly ok: false; readonly reason: string };

/** What a tree produced: the final output in the run's own finding ids, and its depth. */
export type TreeResult =
  { readonly ok: true; readonly output: SynthesisOutput; readonly levels: number } | { readonly ok: false; readonly reason: string; readonly levels: number };

/** A partial claim's citations and questions, in the run's own finding ids. */
interface Expansion {
  readonly cites: readonly string[];
  readonly questionIds: readonly string[];
}

/** The id a citation names, without a run qualification (`<runId>/A#1` names `A#1`). */
const unqualified = (raw: string): string => raw.slice(raw.lastIndexOf('/') + 1);

/**
 * What one synthesis of the tree may cite: the findings of its own input (a partial stands for
 * what it cited), and, above level 1, a run finding that one of its partials cites (the final
 * may cite `A#1` that a partial it was given rests on). Any other id of the run is outside its
 * input: it never saw that finding, so the citation cannot count for it.
 */
interface Reach {
  readonly runId: string;
  /** `level.group` of the synthesis, for the words of an out-of-input citation. */
  readonly at: string;
  /** What each id of its input stands for: a partial's citations, or `undefined` for a run finding (kept as written). */
  readonly inputs: ReadonlyMap<string, readonly string[] | undefined>;
  /** Ids that would resolve at the top: the run's findings and this level's partials. */
  readonly known: ReadonlySet<string>;
}

/**
 * One citation (or set-aside id) of a synthesis, in the run's own ids. An id of its input is
 * expanded; another run's id and an id nothing has stay as written (the top audit names them);
 * an id of this run outside its input is rewritten so that the top audit cannot resolve it, and
 * names it as an unknown citation: else a finding one group dropped would read as cited because
 * another group, which never saw it, cited its id, and the drop would go unnoticed.
 */
const resolveAt = (reach: Reach, raw: string): readonly string[] => {
  const slash = raw.lastIndexOf('/');
  if (slash >= 0 && raw.slice(0, slash) !== reach.runId) return [raw];
  const id = unqualified(raw);
  if (reach.inputs.has(id)) return reach.inputs.get(id) ?? [raw];
  return reach.known.has(id) ? [`${id} (not in the input of synthesis ${reach.at})`] : [raw];
};

/** The output of one synthesis in the run's own ids: citations resolved, and a set-aside partial sets aside what it cited. */
const expandOutput = (output: SynthesisOutput, reach: Reach): SynthesisOutput => ({
  claims: output.claims.map((claim): SynthesisClaim => ({ ...claim, cites: [...new Set(claim.cites.flatMap((raw) => resolveAt(reach, raw)))] })),
  setAside: output.setAside.flatMap((entry) => resolveAt(reach, entry.findingId).map((findingId) => ({ findingId, reason: entry.reason }))),
});

/**
 * The reach of the synthesis of `node` (see {@link Reach}): its input's ids, and the run's
 * findings its partials cite in this run (not another run's, nor what nothing has).
 */
const reachOf = (runId: string, node: SynthesisNode, partials: ReadonlyMap<string, Expansion>, runFindings: ReadonlySet<string>): Reach => {
  const inputs = new Map<string, readonly string[] | undefined>();
  const ofThisRun = (raw: string) => raw.lastIndexOf('/') < 0 || raw.slice(0, raw.lastIndexOf('/')) === runId;
  for (const finding of node.findings) {
    const cited = partials.get(finding.id)?.cites ?? [];
    for (const id of cited.filter(ofThisRun).map(unqualified)) if (runFindings.has(id)) inputs.set(id, undefined);
  }
  for (const finding of node.findings) inputs.set(finding.id, partials.get(finding.id)?.cites);
  return { runId, at: `${node.level}.${node.group}`, inputs, known: new Set([...runFindings, ...partials.keys()]) };
};

/** The conflicts of a group's findings: those whose every side has a finding in the group. */
const conflictsWithin = (conflicts: readonly Conflict[], findings: readonly Finding[], sideOf: (id: string) => readonly string[]): Conflict[] => {
  const here = new Map(findings.map((f) => [f.id, f]));
  return conflicts.flatMap((conflict) => {
    const sides = conflict.sides.map((side) => ({
      value: side.value,
      findings: [...new Set(side.findings.flatMap((f) => sideOf(f.findingId)))]
        .flatMap((id) => {
          const finding = here.get(id);
          return finding === undefined ? [] : [finding];
        })
        .map((f) => ({ findingId: f.id, subtaskId: f.subtaskId, evidence: [...f.evidence] })),
    }));
    return sides.every((side) => side.findings.length > 0) ? [{ key: conflict.key, sides }] : [];
  });
};

/** What a tree synthesizes: the run (for its run-qualified ids), its `ok` findings and their conflicts. */
export interface TreeInput {
  readonly runId: string;
  readonly findings: readonly Finding[];
  readonly conflicts: readonly Conflict[];
}

/**
 * Synthesizes findings in one call when they fit the input budget, else as a tree of partial
 * syntheses. `synthesize` makes one synthesis (with its own repair); the tree stops at the first
 * that returns no output. The result's output speaks only of the run's own finding ids, and a
 * citation counts only for a synthesis that was given the finding (directly, or through a partial).
 *
 * @example
 * const result = await synthesizeTree({ runId, findings, conflicts }, { maxFindings: 40 }, (node) => callModel(node));
 * if (result.ok) auditSynthesis({ runId, findings, conflicts, missingQuestions }, result.output);
 */
export const synthesizeTree = async (input: TreeInput, budget: InputBudget, synthesize: (node: SynthesisNode) => Promise<NodeResult>): Promise<TreeResult> => {
  const { runId, findings, conflicts } = input;
  const runFindings = new Set(findings.map((f) => f.id));
  let level = 1;
  let current: readonly Finding[] = findings;
  let partials = new Map<string, Expansion>();
  let setAside: SetAside[] = [];
  // The findings of the current level that stand for each of the run's own findings.
  let memberOf = (original: string): readonly string[] => [original];
  for (;;) {
    const final = fitsInput(current, budget) || current.length <= 1;
    const groups = final ? [[...current]] : groupFindings(current, budget);
    const next: Finding[] = [];
    const nextPartials = new Map<string, Expansion>();
    const nextSetAside: SetAside[] = [];
    for (const [index, group] of groups.entries()) {
      const node: SynthesisNode = { level, group: index + 1, final, findings: group, conflicts: conflictsWithin(conflicts, group, memberOf) };
      const result = await synthesize(node);
      if (!result.ok) return { ok: false, reason: result.reason, levels: level };
      const expanded = expandOutput(result.output, reachOf(runId, node, partials, runFindings));
      if (final) return { ok: true, output: { claims: expanded.claims, setAside: [...setAside, ...expanded.setAside] }, levels: level };
      nextSetAside.push(...expanded.setAside);
      const byId = new Map(group.map((f) => [f.id, f]));
      for (const [n, claim] of expanded.claims.entries()) {
        const subtaskId = `S${level}.${index + 1}`;
        const id = `${subtaskId}#${n + 1}`;
        const ownCites = result.output.claims[n]!.cites.map(unqualified);
        const questionIds = [
          ...new Set([...ownCites.flatMap((c) => byId.get(c)?.questionIds ?? []), ...(claim.kind === 'gap' ? (claim.questionIds ?? []) : [])]),
        ];
        nextPartials.set(id, { cites: claim.cites, questionIds });
        next.push({ id, subtaskId, worker: 'synthesis', questionIds, statement: claim.text, evidence: claim.cites, content: claim, claims: [] });
      }
    }
    // A level that does not shrink would never reach one input: stop rather than loop.
    if (next.length >= current.length) return { ok: false, reason: `the partial syntheses of level ${level} did not shrink the findings`, levels: level };
    const expansions = nextPartials;
    memberOf = (original: string) => [...expansions.entries()].filter(([, e]) => e.cites.includes(original)).map(([id]) => id);
    partials = nextPartials;
    setAside = [...setAside, ...nextSetAside];
    current = next;
    level += 1;
  }
};
