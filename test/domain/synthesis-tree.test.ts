import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SynthesisOutput } from '../../lib/contract';
import { auditSynthesis, findConflicts, groupFindings, synthesizeTree, type Finding, type NodeResult, type SynthesisNode } from '../../lib/domain';

const finding = (subtaskId: string, n: number, claims: Finding['claims'] = []): Finding => ({
  id: `${subtaskId}#${n}`,
  subtaskId,
  worker: 'w',
  questionIds: ['q1'],
  evidence: [`${subtaskId}-${n}`],
  content: {},
  claims,
});

const RUN = 'r';

/** Ten findings: S1#1 … S10#1 (subtask ids that cannot clash with a partial's `S<level>.<group>`). */
const ten = Array.from({ length: 10 }, (_, i) => finding(`T${i + 1}`, 1));

/** A node that cites every finding of its input in one claim, and sets nothing aside. */
const oneClaim = async (node: SynthesisNode): Promise<NodeResult> => ({
  ok: true,
  output: { claims: [{ text: `group ${node.level}.${node.group}`, cites: node.findings.map((f) => f.id), kind: 'finding' }], setAside: [] },
});

describe('groupFindings', () => {
  it('cuts consecutive groups that fit: 10 findings at 4 a group are 4, 4 and 2', () => {
    expect(groupFindings(ten, { maxFindings: 4 }).map((g) => g.map((f) => f.subtaskId))).toEqual([
      ['T1', 'T2', 'T3', 'T4'],
      ['T5', 'T6', 'T7', 'T8'],
      ['T9', 'T10'],
    ]);
  });
});

describe('synthesizeTree', () => {
  it('one synthesis when the findings fit', async () => {
    const nodes: SynthesisNode[] = [];
    const result = await synthesizeTree({ runId: RUN, findings: ten, conflicts: [] }, { maxFindings: 10 }, async (node) => (nodes.push(node), oneClaim(node)));
    expect(result).toMatchObject({ ok: true, levels: 1 });
    expect(nodes.map((n) => [n.level, n.group, n.final, n.findings.length])).toEqual([[1, 1, true, 10]]);
  });

  it('10 findings at 4 a group: three partials, then a final over their three claims, expanded back to all ten ids', async () => {
    const nodes: SynthesisNode[] = [];
    const result = await synthesizeTree({ runId: RUN, findings: ten, conflicts: [] }, { maxFindings: 4 }, async (node) => (nodes.push(node), oneClaim(node)));
    expect(nodes.map((n) => [n.level, n.group, n.final, n.findings.map((f) => f.id)])).toEqual([
      [1, 1, false, ['T1#1', 'T2#1', 'T3#1', 'T4#1']],
      [1, 2, false, ['T5#1', 'T6#1', 'T7#1', 'T8#1']],
      [1, 3, false, ['T9#1', 'T10#1']],
      [2, 1, true, ['S1.1#1', 'S1.2#1', 'S1.3#1']],
    ]);
    expect(result.ok && result.output.claims).toEqual([{ text: 'group 2.1', cites: ten.map((f) => f.id), kind: 'finding' }]);
    expect(result.levels).toBe(2);
    if (!result.ok) throw new Error(result.reason);
    expect(auditSynthesis({ runId: 'r', findings: ten, conflicts: [], missingQuestions: [] }, result.output).clean).toBe(true);
  });

  it('a finding a partial drops is named by its own id in the composed audit; one a partial sets aside stays set aside', async () => {
    const result = await synthesizeTree({ runId: RUN, findings: ten, conflicts: [] }, { maxFindings: 4 }, async (node) => {
      if (node.level === 1 && node.group === 2) {
        return {
          ok: true,
          output: { claims: [{ text: 'g2', cites: ['T5#1', 'T6#1'], kind: 'finding' }], setAside: [{ findingId: 'T7#1', reason: 'duplicate of T5#1' }] },
        };
      }
      return oneClaim(node);
    });
    if (!result.ok) throw new Error(result.reason);
    const audit = auditSynthesis({ runId: 'r', findings: ten, conflicts: [], missingQuestions: [] }, result.output);
    expect(audit.problems.map((p) => [p.code, 'findingId' in p ? p.findingId : undefined])).toEqual([['dropped_finding', 'T8#1']]);
    expect(audit.setAside).toBe(1);
  });

  it('a conflict across groups reaches the final as the partial claims that cite each side', async () => {
    const left = finding('T1', 1, [{ key: 'price', value: 49 }]);
    const right = finding('T9', 1, [{ key: 'price', value: 59 }]);
    const findings = [left, ...ten.slice(1, 8), right, ten[9]!];
    const nodes: SynthesisNode[] = [];
    await synthesizeTree({ runId: RUN, findings, conflicts: findConflicts(findings) }, { maxFindings: 4 }, async (node) => (nodes.push(node), oneClaim(node)));
    expect(nodes.map((n) => n.conflicts.map((c) => c.sides.map((s) => s.findings.map((f) => f.findingId))))).toEqual([[], [], [], [[['S1.1#1'], ['S1.3#1']]]]);
  });

  it('a node without output stops the tree with its reason', async () => {
    const result = await synthesizeTree({ runId: RUN, findings: ten, conflicts: [] }, { maxFindings: 4 }, async (node) =>
      node.group === 2 ? { ok: false, reason: 'model down' } : oneClaim(node),
    );
    expect(result).toEqual({ ok: false, reason: 'model down', levels: 1 });
  });

  it('property: with faithful partials, nothing is lost between levels, whatever the sizes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 2, max: 7 }), async (count, per) => {
        const findings = Array.from({ length: count }, (_, i) => finding(`T${i + 1}`, 1));
        const result = await synthesizeTree({ runId: RUN, findings, conflicts: [] }, { maxFindings: per }, oneClaim);
        if (!result.ok) throw new Error(result.reason);
        const output: SynthesisOutput = result.output;
        expect(new Set(output.claims.flatMap((c) => c.cites))).toEqual(new Set(findings.map((f) => f.id)));
        expect(auditSynthesis({ runId: 'r', findings, conflicts: [], missingQuestions: [] }, output).clean).toBe(true);
        expect(result.levels).toBe(count <= per ? 1 : Math.ceil(Math.log(count) / Math.log(per) - 1e-9));
      }),
      { numRuns: 100 },
    );
  });
});

/** The audit of a tree's output against the ten findings, as [code, id] pairs. */
const problemsOver = (findings: readonly Finding[], output: SynthesisOutput) =>
  auditSynthesis({ runId: RUN, findings, conflicts: [], missingQuestions: [] }, output).problems.map((p) => [
    p.code,
    'findingId' in p ? p.findingId : undefined,
  ]);

/** Ten findings at 4 a group (T1-T4, T5-T8, T9-T10) where the group of T5-T8 drops T8#1, and `other` answers one more node. */
const droppingT8 = (other: (node: SynthesisNode) => NodeResult | undefined) => async (node: SynthesisNode) => {
  if (node.level === 1 && node.group === 2)
    return { ok: true as const, output: { claims: [{ text: 'g2', cites: ['T5#1', 'T6#1', 'T7#1'], kind: 'finding' as const }], setAside: [] } };
  return other(node) ?? oneClaim(node);
};

describe('synthesizeTree: a citation counts only for a synthesis that was given the finding', () => {
  it('a group that cites T8#1, which it never saw, does not hide that the group that saw it dropped it', async () => {
    const result = await synthesizeTree(
      { runId: RUN, findings: ten, conflicts: [] },
      { maxFindings: 4 },
      droppingT8((node) =>
        node.level === 1 && node.group === 3
          ? { ok: true, output: { claims: [{ text: 'g3', cites: ['T9#1', 'T10#1', 'T8#1'], kind: 'finding' }], setAside: [] } }
          : undefined,
      ),
    );
    if (!result.ok) throw new Error(result.reason);
    expect(problemsOver(ten, result.output)).toEqual([
      ['unknown_citation', 'T8#1 (not in the input of synthesis 1.3)'],
      ['dropped_finding', 'T8#1'],
    ]);
  });

  it('nor does the final citing T8#1 directly; it may cite T1#1 directly, which the partial it was given rests on', async () => {
    const result = await synthesizeTree(
      { runId: RUN, findings: ten, conflicts: [] },
      { maxFindings: 4 },
      droppingT8((node) =>
        node.final
          ? { ok: true, output: { claims: [{ text: 'all', cites: ['S1.1#1', 'S1.2#1', 'S1.3#1', 'T1#1', 'T8#1'], kind: 'finding' }], setAside: [] } }
          : undefined,
      ),
    );
    if (!result.ok) throw new Error(result.reason);
    expect(problemsOver(ten, result.output)).toEqual([
      ['unknown_citation', 'T8#1 (not in the input of synthesis 2.1)'],
      ['dropped_finding', 'T8#1'],
    ]);
    expect(result.output.claims[0]?.cites).toEqual([...ten.map((f) => f.id).filter((id) => id !== 'T8#1'), 'T8#1 (not in the input of synthesis 2.1)']);
  });

  it("nor a group setting aside T8#1, which it never saw; another run's T8#1 stays a foreign citation", async () => {
    const result = await synthesizeTree(
      { runId: RUN, findings: ten, conflicts: [] },
      { maxFindings: 4 },
      droppingT8((node) => {
        if (node.level !== 1 || node.group === 2) return undefined;
        const cites = [...node.findings.map((f) => f.id), ...(node.group === 3 ? ['other/T8#1'] : [])];
        const setAside = node.group === 1 ? [{ findingId: `${RUN}/T8#1`, reason: 'a duplicate' }] : [];
        return { ok: true, output: { claims: [{ text: `g${node.group}`, cites, kind: 'finding' }], setAside } };
      }),
    );
    if (!result.ok) throw new Error(result.reason);
    expect(problemsOver(ten, result.output)).toEqual([
      ['foreign_citation', 'other/T8#1'],
      ['unknown_set_aside', 'T8#1 (not in the input of synthesis 1.1)'],
      ['dropped_finding', 'T8#1'],
    ]);
  });

  it('property: the composed audit names exactly the findings their group dropped, whatever ids the groups cite beyond their input', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 3, max: 40 }),
        fc.integer({ min: 2, max: 6 }),
        fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }),
        fc.array(fc.nat(), { minLength: 40, maxLength: 40 }),
        async (count, per, drops, strays) => {
          const findings = Array.from({ length: count }, (_, i) => finding(`T${i + 1}`, 1));
          const index = new Map(findings.map((f, i) => [f.id, i]));
          const synthesize = async (node: SynthesisNode): Promise<NodeResult> => {
            if (node.level > 1) return oneClaim(node);
            const own = new Set(node.findings.map((f) => f.id));
            const kept = node.findings.filter((f) => !drops[index.get(f.id)!]).map((f) => f.id);
            // Each finding of the group also brings in one id of the run, most often one outside the group.
            const stray = node.findings.map((f) => findings[strays[index.get(f.id)!]! % count]!.id).filter((id) => !own.has(id));
            return { ok: true, output: { claims: [{ text: `g${node.group}`, cites: [...kept, ...stray], kind: 'finding' }], setAside: [] } };
          };
          const result = await synthesizeTree({ runId: RUN, findings, conflicts: [] }, { maxFindings: per }, synthesize);
          if (!result.ok) throw new Error(result.reason);
          const dropped = problemsOver(findings, result.output)
            .filter(([code]) => code === 'dropped_finding')
            .map(([, id]) => id);
          const expected = findings.filter((_, i) => drops[i]);
          expect(dropped).toEqual(expected.map((f) => f.id));
        },
      ),
      { numRuns: 200 },
    );
  });
});
