import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SynthesisOutput, type AuditProblem, type SynthesisOutputInput } from '../../lib/contract';
import { auditSynthesis, findConflicts, numberFindings, type AuditInput, type Finding } from '../../lib/domain';

const RUN = 'run-1';

const finding = (subtaskId: string, n: number, questionIds: string[], claims: Finding['claims'] = []): Finding => ({
  id: `${subtaskId}#${n}`,
  subtaskId,
  worker: 'scout-pricing',
  questionIds,
  statement: `${subtaskId} says ${n}`,
  evidence: [`${subtaskId.toLowerCase()}-rec-${n}`],
  content: {},
  claims,
});

// A: q1 (two findings), B: q2, E: q5 — E's price contradicts A#1's.
const a1 = finding('A', 1, ['q1'], [{ key: 'pro.price', value: 49 }]);
const a2 = finding('A', 2, ['q1']);
const b1 = finding('B', 1, ['q2']);
const e1 = finding('E', 1, ['q5'], [{ key: 'pro.price', value: 59 }]);
const findings = [a1, a2, b1, e1];
const input: AuditInput = { runId: RUN, findings, conflicts: findConflicts(findings), missingQuestions: ['q3'] };

const audit = (output: SynthesisOutputInput) => auditSynthesis(input, SynthesisOutput.parse(output));
const codes = (problems: readonly AuditProblem[]) => problems.map(({ message: _m, ...rest }) => rest);

const faithful: SynthesisOutputInput = {
  claims: [
    { text: 'Pricing: the Pro plan is listed at $49 and, in the news, at $59.', cites: ['A#1', 'E#1'] },
    { text: 'Annual billing only.', cites: ['A#2'] },
    { text: 'Packaging moved SSO to Enterprise.', cites: ['B#1'] },
    { text: 'Which live deals mention Vantage is unknown: the CRM search did not finish.', kind: 'gap', questionIds: ['q3'] },
  ],
};

describe('findings and conflicts', () => {
  it('numbers a subtask’s findings from 1, in the kind’s order', () => {
    const parts = [0, 1, 2].map((i) => ({ evidence: [`r${i}`], content: i, claims: [] }));
    expect(numberFindings({ subtaskId: 'B.g1', worker: 'w', questionIds: ['q2'] }, parts).map((f) => f.id)).toEqual(['B.g1#1', 'B.g1#2', 'B.g1#3']);
  });

  it('one conflict per key with two values, each side with its findings, subtasks and evidence; agreeing findings are none', () => {
    const again = finding('A.h1', 1, ['q1'], [{ key: 'pro.price', value: 49 }]);
    expect(findConflicts([a1, e1, again, finding('D', 1, ['q4'], [{ key: 'sso', value: true }])])).toEqual([
      {
        key: 'pro.price',
        sides: [
          {
            value: 49,
            findings: [
              { findingId: 'A#1', subtaskId: 'A', evidence: ['a-rec-1'] },
              { findingId: 'A.h1#1', subtaskId: 'A.h1', evidence: ['a.h1-rec-1'] },
            ],
          },
          { value: 59, findings: [{ findingId: 'E#1', subtaskId: 'E', evidence: ['e-rec-1'] }] },
        ],
      },
    ]);
  });

  it('the number 49 and the string "49" are different values', () => {
    expect(findConflicts([a1, finding('C', 1, [], [{ key: 'pro.price', value: '49' }])])).toHaveLength(1);
  });
});

describe('auditSynthesis', () => {
  it('a faithful synthesis is clean: every finding cited, q3 named missing by a gap claim, the conflict cited on both sides', () => {
    expect(audit(faithful)).toEqual({ clean: true, findings: 4, cited: 4, setAside: 0, problems: [] });
  });

  it('a dropped finding is named by its id', () => {
    const dropped = { claims: faithful.claims.filter((c) => !c.cites?.includes('B#1')) };
    expect(codes(audit(dropped).problems)).toEqual([
      { code: 'dropped_finding', findingId: 'B#1' },
      { code: 'unaddressed_question', questionId: 'q2', findingIds: ['B#1'] },
    ]);
  });

  it('a finding set aside with a reason is not dropped, and its question needs no claim', () => {
    const output = { claims: faithful.claims.filter((c) => !c.cites?.includes('B#1')), setAside: [{ findingId: 'B#1', reason: 'out of date' }] };
    expect(audit(output)).toMatchObject({ clean: true, cited: 3, setAside: 1 });
  });

  it('an invented citation and a foreign one are named with their claims', () => {
    const output = { claims: [...faithful.claims, { text: 'Vantage cut prices.', cites: ['A#7', 'other-run/B#1', `${RUN}/B#1`] }] };
    expect(codes(audit(output).problems)).toEqual([
      { code: 'unknown_citation', claim: 4, findingId: 'A#7' },
      { code: 'foreign_citation', claim: 4, findingId: 'other-run/B#1', runId: 'other-run' },
    ]);
  });

  it('an ignored conflict names every finding of both sides', () => {
    const output = {
      claims: [{ text: 'The Pro plan is $49.', cites: ['A#1', 'A#2'] }, { text: 'The news says $59.', cites: ['E#1'] }, ...faithful.claims.slice(2)],
    };
    expect(codes(audit(output).problems)).toEqual([{ code: 'unaddressed_conflict', key: 'pro.price', findingIds: ['A#1', 'E#1'] }]);
  });

  it('answering a missing question from nothing is two problems: no citation, and a missing question answered', () => {
    const output = { claims: [...faithful.claims.slice(0, 3), { text: 'Acme and Globex mention Vantage.', questionIds: ['q3'] }] };
    expect(codes(audit(output).problems)).toEqual([
      { code: 'uncited_claim', claim: 3 },
      { code: 'answers_missing_question', claim: 3, questionIds: ['q3'] },
    ]);
  });

  it('a claim resting only on findings of a missing question answers it; a gap claim may cite them', () => {
    const c1 = finding('C', 1, ['q3']);
    const withPartial: AuditInput = { ...input, findings: [...findings, c1] };
    const claims = faithful.claims.slice(0, 3);
    const asAnswer = SynthesisOutput.parse({ claims: [...claims, { text: 'Acme mentions Vantage.', cites: ['C#1'] }] });
    expect(codes(auditSynthesis(withPartial, asAnswer).problems)).toEqual([{ code: 'answers_missing_question', claim: 3, questionIds: ['q3'] }]);
    const asGap = SynthesisOutput.parse({ claims: [...claims, { text: 'q3 is missing; one note so far.', cites: ['C#1'], kind: 'gap', questionIds: ['q3'] }] });
    expect(auditSynthesis(withPartial, asGap).problems).toEqual([]);
  });

  it('a gap claim naming a question that is not missing is a problem', () => {
    const output = { claims: [...faithful.claims, { text: 'Nothing on reviews.', kind: 'gap' as const, questionIds: ['q4', 'q3'] }] };
    expect(codes(audit(output).problems)).toEqual([{ code: 'gap_not_missing', claim: 4, questionIds: ['q4'] }]);
  });

  it('setAside of an id no finding has is named', () => {
    expect(codes(audit({ ...faithful, setAside: [{ findingId: 'Q#1', reason: 'noise' }] }).problems)).toEqual([
      { code: 'unknown_set_aside', findingId: 'Q#1' },
    ]);
  });
});

describe('property: the audit flags every uncited, unknown or dropped id, and nothing else', () => {
  // Findings without questions or claims, so only the citation rules apply.
  const findingsArb = fc
    .uniqueArray(fc.tuple(fc.constantFrom('A', 'B', 'C', 'D.g1'), fc.integer({ min: 1, max: 4 })), { selector: ([s, n]) => `${s}#${n}`, maxLength: 10 })
    .map((pairs) => pairs.map(([s, n]) => finding(s, n, [])));
  const citation = (known: readonly Finding[]) =>
    fc.oneof(
      ...(known.length > 0 ? [fc.constantFrom(...known.map((f) => f.id))] : []),
      fc.constantFrom('Z#1', 'A#9', 'nope'),
      fc.constantFrom('elsewhere/A#1', 'r2/B#2'),
    );

  it('holds over random findings and random outputs', () => {
    fc.assert(
      fc.property(
        findingsArb.chain((known) =>
          fc.record({
            known: fc.constant(known),
            claims: fc.array(fc.array(citation(known), { maxLength: 4 }), { maxLength: 5 }),
            setAside: fc.array(citation(known), { maxLength: 3 }),
          }),
        ),
        ({ known, claims, setAside }) => {
          const output = SynthesisOutput.parse({
            claims: claims.map((cites) => ({ text: 'claim', cites })),
            setAside: setAside.map((findingId) => ({ findingId, reason: 'r' })),
          });
          const ids = new Set(known.map((f) => f.id));
          const isForeign = (c: string) => c.includes('/') && !c.startsWith(`${RUN}/`);
          const expected = new Set<string>();
          claims.forEach((cites, claim) => {
            if (cites.length === 0) expected.add(`uncited:${claim}`);
            for (const c of new Set(cites)) {
              if (isForeign(c)) expected.add(`foreign:${claim}:${c}`);
              else if (!ids.has(c)) expected.add(`unknown:${claim}:${c}`);
            }
          });
          for (const c of setAside) if (isForeign(c) || !ids.has(c)) expected.add(`unknown_set_aside:${c}`);
          const used = new Set([...claims.flat(), ...setAside]);
          for (const id of ids) if (!used.has(id)) expected.add(`dropped:${id}`);

          const result = auditSynthesis({ runId: RUN, findings: known, conflicts: [], missingQuestions: [] }, output);
          const found = result.problems.map((p) => {
            switch (p.code) {
              case 'uncited_claim':
                return `uncited:${p.claim}`;
              case 'foreign_citation':
                return `foreign:${p.claim}:${p.findingId}`;
              case 'unknown_citation':
                return `unknown:${p.claim}:${p.findingId}`;
              case 'unknown_set_aside':
                return `unknown_set_aside:${p.findingId}`;
              case 'dropped_finding':
                return `dropped:${p.findingId}`;
              // None of these can arise here: no conflicts, no missing questions, no questions, output always valid.
              case 'answers_missing_question':
              case 'gap_not_missing':
              case 'invalid_output':
              case 'unaddressed_conflict':
              case 'unaddressed_question':
                return `unexpected:${p.code}`;
            }
          });
          expect(new Set(found)).toEqual(expected);
          // Each problem once (duplicate set-aside entries of one unknown id aside).
          expect(found.filter((f) => !f.startsWith('unknown_set_aside')).length).toBe([...expected].filter((e) => !e.startsWith('unknown_set_aside')).length);
          expect(result.clean).toBe(expected.size === 0);
        },
      ),
      { numRuns: 500 },
    );
  });
});
