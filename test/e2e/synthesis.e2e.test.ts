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
