import { describe, expect, it } from 'vitest';
import { example, runToEnd, subtask } from './target';

/*
 * The two runs go at once (`describe.concurrent`): each spends most of its time waiting out the CRM
 * worker's two 5-s deadlines, and the CRM kind's two concurrent workers (examples/app/cdk.ts) are
 * one for each run's C.
 */
describe.concurrent('the Scout example: Scout, five workers, the CRM one misses its deadline', () => {
  it('answers from the other four and says q3 is missing', async () => {
    const run = await runToEnd(example('scout'));

    expect(run.status).toBe('succeeded');
    expect(run.answer?.coverage.complete).toBe(false);
    expect(run.answer?.coverage.missingQuestions).toEqual(['q3']);
    // One retry (policy timed_out: 1), and it timed out too: the reason names the latest attempt.
    expect(run.answer?.coverage.degradedReason).toEqual(['C.r2:timed_out']);
    // Nobody read the CRM source: a gap naming the latest attempt and why, never "no gaps".
    expect(run.answer?.coverage.gaps).toEqual([{ ids: ['crm:vantage'], kind: 'unread', subtaskId: 'C.r2', reason: 'timed_out', status: 'unchecked' }]);
    expect(run.answer?.coverage.statement).not.toContain('no gaps');
    expect(subtask(run, 'C').state).toBe('timed_out');
    expect(subtask(run, 'C.r2').state).toBe('timed_out');
    expect(Object.keys(run.answer?.result.findings ?? {}).sort()).toEqual(['q1', 'q2', 'q4', 'q5']);
    // The subtask list is as long as what was dispatched: five, plus the retry.
    expect(run.subtasks.map((s) => `${s.id}:${s.state}`)).toEqual(['A:ok', 'B:ok', 'C:timed_out', 'D:ok', 'E:ok', 'C.r2:timed_out']);
  });

  it('fails the run when the CRM worker is required under onRequiredGap "fail", and still reports coverage', async () => {
    const run = await runToEnd(example('scout-required'));

    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('RequiredGapError');
    expect(run.answer?.coverage).toMatchObject({
      complete: false,
      missingQuestions: ['q3'],
      degradedReason: ['C.r2:timed_out'],
      partitions: 5,
      gaps: [{ ids: ['crm:vantage'], kind: 'unread', subtaskId: 'C.r2', reason: 'timed_out', status: 'unchecked' }],
    });
    expect(run.answer?.result).toEqual({});
  });
});
