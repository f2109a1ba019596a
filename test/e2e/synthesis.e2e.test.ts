import { describe, expect, it } from 'vitest';
import { example, runToEnd } from './target';

describe('Scout with synthesis, through the local cloud', () => {
  it('claims cite the findings of A, B, D and E, q3 is named missing, the audit is clean, and the calls are in the usage', async () => {
    const request = example('scout-synthesis');
    const run = await runToEnd(request);

    expect(run.status).toBe('succeeded');
    const synthesis = run.answer?.synthesis;
    expect(synthesis).toMatchObject({ by: 'model', model: 'offline', attempts: 1, levels: 1 });
    expect(synthesis?.audit).toMatchObject({ clean: true, problems: [] });
    const cited = new Set(synthesis?.claims.flatMap((claim) => claim.cites.map((id) => id.slice(0, id.indexOf('#')))));
    expect([...cited].sort()).toEqual(['A', 'B', 'D', 'E']);
    expect(synthesis?.claims.filter((claim) => claim.kind === 'gap').map((claim) => claim.questionIds)).toEqual([['q3']]);
    // Every finding of an ok subtask is listed with its evidence, and every one is cited.
    expect(synthesis?.audit.cited).toBe(synthesis?.findings.length);
    expect(run.answer?.coverage).toMatchObject({ synthesisAuditedClean: true, complete: false, missingQuestions: ['q3'] });
    expect(run.answer?.text.endsWith(run.answer.coverage.statement)).toBe(true);
    // Synthesis's one call at 3 is in the run's usage, beside what the subtasks spent.
    const subtasks = run.subtasks.reduce((sum, s) => ({ calls: sum.calls + s.usage.modelCalls, cost: sum.cost + s.usage.estimatedCost }), {
      calls: 0,
      cost: 0,
    });
    expect(run.usage).toEqual({ modelCalls: subtasks.calls + 1, estimatedCost: subtasks.cost + 3 });
    expect(run.budget).toEqual(request.budget);
  });
});

describe('a conflict, through the local cloud', () => {
  it('the pricing page and a press report name different enterprise floors: the coverage lists it, and one claim cites both', async () => {
    const run = await runToEnd(example('scout-conflict'));

    expect(run.status).toBe('succeeded');
    // A#1 is the pricing page's floor ($48,000 to $60,000: the last figure, 60,000), P#1 the press report's $55,000.
    expect(run.answer?.coverage.conflicts).toEqual([
      {
        key: 'vantage.enterprise.floor',
        sides: [
          { value: 60000, findings: [{ findingId: 'A#1', subtaskId: 'A', evidence: ['pricing-2025-05-02-a'] }] },
          { value: 55000, findings: [{ findingId: 'P#1', subtaskId: 'P', evidence: ['press-2025-05-20'] }] },
        ],
      },
    ]);
    const synthesis = run.answer?.synthesis;
    expect(synthesis?.audit).toMatchObject({ clean: true, problems: [] });
    expect(synthesis?.claims[0]?.cites).toEqual(['A#1', 'P#1']);
    expect(synthesis?.claims[0]?.text).toContain('The sources disagree on vantage.enterprise.floor');
    expect(run.answer?.coverage.synthesisAuditedClean).toBe(true);
  });
});

describe('a tree synthesis, through the local cloud', () => {
  /**
   * examples/scout-tree.json: six Scout workers, one source each, one finding per record they read:
   * A (pricing, q1) 2, B (packaging, q2) 2, D (G2, q3) 2, R (Capterra, q3) 4, T (TrustRadius, q3) 3
   * and E (news, q4) 1, so 14 findings. The example app's synthesizer takes at most 8 findings a
   * call (their 20,000-character limit is far off), so level 1 is two partials, over
   * A#1 A#2 B#1 B#2 D#1 D#2 R#1 R#2 and over R#3 R#4 T#1 T#2 T#3 E#1. The faithful offline model
   * writes a claim per question of its input: 3 (q1, q2, q3) and 2 (q3, q4) partial claims, 5 in
   * all, which fit one call: level 2 is the final. 3 calls, none repaired.
   */
  const IDS = {
    q1: ['A#1', 'A#2'],
    q2: ['B#1', 'B#2'],
    q3: ['D#1', 'D#2', 'R#1', 'R#2', 'R#3', 'R#4', 'T#1', 'T#2', 'T#3'],
    q4: ['E#1'],
  };

  it('14 findings over an input of 8: two partials, then the final; every finding is cited through both levels, and the 3 calls are in the usage', async () => {
    const request = example('scout-tree');
    const run = await runToEnd(request);

    expect(run.status).toBe('succeeded');
    const synthesis = run.answer?.synthesis;
    expect(synthesis).toMatchObject({ by: 'model', model: 'offline', levels: 2, attempts: 3 });
    expect(synthesis?.findings.map((f) => f.id)).toEqual(Object.values(IDS).flat());
    expect(synthesis?.audit).toEqual({ clean: true, findings: 14, cited: 14, setAside: 0, problems: [] });
    expect(synthesis?.setAside).toEqual([]);
    // The final's claims cite partials; expanded back, each cites its question's findings of both groups.
    expect(synthesis?.claims.map((claim) => [claim.questionIds, claim.cites])).toEqual(Object.entries(IDS).map(([q, ids]) => [[q], ids]));
    // Nothing lost between levels: q3's claim joins the statements of D (group 1), R (both groups) and T (group 2).
    expect(synthesis?.claims[2]?.text).toBe(
      'q3: Reviewers rate onboarding highly: 4.6 out of 5 across 212 reviews; Several May reviews mention a steep price rise at renewal; ' +
        'Capterra reviewers praise the new dashboard; Two reviewers report slower support since April; Admins like the audit log export; ' +
        'One reviewer is moving to a rival at renewal; TrustRadius rates Vantage 8.1 out of 10; Buyers call the Growth tier good value; ' +
        'Several reviewers want SSO back in Business.',
    );
    expect(run.answer?.coverage).toMatchObject({ complete: true, synthesisAuditedClean: true, missingQuestions: [] });
    // Each subtask planned its one search (1 call at 3); synthesis made 3 calls at 3.
    expect(run.subtasks.map((s) => [s.id, s.usage])).toEqual(['A', 'B', 'D', 'R', 'T', 'E'].map((id) => [id, { modelCalls: 1, estimatedCost: 3 }]));
    expect(run.usage).toEqual({ modelCalls: 6 + 3, estimatedCost: 18 + 9 });
    expect(run.budget).toEqual(request.budget);
  });
});
