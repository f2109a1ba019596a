import { describe, expect, it } from 'vitest';
import type { RunRequestInput } from '../../lib/contract';
import { runToEnd, subtask } from './target';

/*
 * The re-check rule through the whole pipeline: a gap is settled only by a source other than the
 * one that produced it. The backlog is 60 tickets T-001…T-060 (examples/app/helpdesk.ts); ticket
 * n took n % 5 + 1 hours, so each run of five tickets takes 2 + 3 + 4 + 5 + 1 = 15 hours and the
 * backlog 12 × 15 = 180. The helpdesk's paged API always loses T-017, T-018 and T-019
 * (17 % 5 + 1 = 3, then 4 and 5: 12 hours), so the helpdesk alone reads 57 tickets and 168 hours.
 */

const TICKETS = Array.from({ length: 60 }, (_, i) => `T-${String(i + 1).padStart(3, '0')}`);
const DROPPED = ['T-017', 'T-018', 'T-019'];

/** Three subtasks of 20 tickets (A, B, C); A holds the dropped ones. No policy: the defaults apply. */
const backlog = (worker: string, delegation: Record<string, unknown> = {}): RunRequestInput => ({
  goal: 'How many hours did the support backlog take to resolve?',
  universe: { dimension: 'ids', noun: 'ticket', ids: TICKETS },
  questions: [{ id: 'q1', text: 'How many hours did the backlog take?' }],
  split: { worker, chunkSize: 20, questionIds: ['q1'], deadlineSeconds: 30, budget: { modelCalls: 1, estimatedCostPerCall: 1 }, ...delegation },
  budget: { modelCalls: 10, costLimit: 100 },
});

describe('re-checks: only another source confirms a gap', () => {
  it('leaves a gap the helpdesk re-read itself unsettled: complete false, the dropped ids named, never confirmed_empty', async () => {
    const run = await runToEnd(backlog('helpdesk'));

    expect(run.status).toBe('succeeded');
    expect(run.subtasks.map((s) => `${s.id}:${s.worker}:${s.state}`)).toEqual(['A:helpdesk:ok', 'B:helpdesk:ok', 'C:helpdesk:ok', 'A.g1:helpdesk:empty']);
    // The re-check reached the helpdesk, which answered with nothing for exactly the three tickets.
    expect(subtask(run, 'A.g1')).toMatchObject({ assigned: { ids: DROPPED }, sourcesReached: 1, observed: { ids: [], recordCount: 0 } });
    expect(run.answer?.coverage).toMatchObject({
      complete: false,
      missingQuestions: [],
      degradedReason: ['A.g1:unconfirmed_empty'],
      gaps: [
        { ids: DROPPED, kind: 'observed', subtaskId: 'A', status: 'unconfirmed_empty', recheckedAgainst: 'helpdesk', recheckSubtaskId: 'A.g1', records: 0 },
      ],
    });
    expect(run.answer?.coverage.statement).toContain(
      'One gap (ids T-017, T-018 and T-019) re-read from the helpdesk, which again returned nothing; no other source confirmed it.',
    );
    expect(run.answer?.result).toEqual({ tickets: 57, hours: 168 });
  });

  it('fails the run when that subtask is required under onRequiredGap "fail", still reporting the gap', async () => {
    const run = await runToEnd({
      ...backlog('helpdesk', { required: true, justification: 'the total needs every ticket' }),
      policy: { onRequiredGap: 'fail' },
    });

    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('RequiredGapError');
    expect(run.error?.message).toContain('A.g1:unconfirmed_empty');
    expect(run.answer?.coverage).toMatchObject({
      complete: false,
      gaps: [{ ids: DROPPED, kind: 'observed', subtaskId: 'A', status: 'unconfirmed_empty', recheckedAgainst: 'helpdesk' }],
    });
  });

  it('settles the gap with an alternate source that has the data: data_found, complete, the totals whole', async () => {
    // helpdesk-mirrored takes { pageSize }, the export { format }: its recheckInput maps one to the other.
    const run = await runToEnd(backlog('helpdesk-mirrored', { input: { pageSize: 20 } }));

    expect(run.status).toBe('succeeded');
    expect(subtask(run, 'A.g1')).toMatchObject({
      worker: 'ticket-export',
      state: 'ok',
      assigned: { ids: DROPPED },
      observed: { ids: DROPPED, recordCount: 3 },
    });
    expect(run.answer?.coverage).toMatchObject({
      complete: true,
      degradedReason: [],
      gaps: [{ ids: DROPPED, kind: 'observed', subtaskId: 'A', status: 'data_found', recheckedAgainst: 'ticket-export', recheckSubtaskId: 'A.g1', records: 3 }],
    });
    // 57 tickets and 168 hours from the helpdesk, 3 tickets and 3 + 4 + 5 = 12 hours from the export.
    expect(run.answer?.result).toEqual({ tickets: 60, hours: 180 });
    expect(run.answer?.text).toContain('60 tickets, 180 hours to resolve.');
  });
});
