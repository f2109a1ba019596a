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
