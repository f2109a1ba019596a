import { describe, expect, it } from 'vitest';
import type { RunResource, SubtaskView } from '../../lib/contract';
import { subtaskText } from '../../lib/web/describe';
import { pictureOf } from '../../lib/web/geometry';
import { taxRun } from './fixtures';

// 2025 has 365 days. Day offsets from 1 January: 1 April = 31+28+31 = 90; 1 June = 90+30+31 = 151.
const day = (offset: number) => offset / 365;

/** B's worker has read April and May (12 transactions) and checkpointed them. */
const aprilAndMay: NonNullable<SubtaskView['checkpoint']> = {
  generation: 1,
  sequence: 1,
  writtenAt: '2025-07-02T12:00:05.000Z',
  covered: [{ from: '2025-04-01', toExclusive: '2025-06-01' }],
  observed: { minDate: '2025-04-01', maxDate: '2025-05-31', recordCount: 12 },
  sources: ['stmt-2025-04', 'stmt-2025-05'],
  sourcesReached: 2,
  usage: { modelCalls: 2, estimatedCost: 14 },
};

/** The tax run with B put back into `state` (no outcome yet) and its checkpoint. */
const withB = (state: SubtaskView['state']): RunResource => {
  const run = taxRun();
  return {
    ...run,
    subtasks: run.subtasks.map((s) => (s.id === 'B' ? { ...s, state, observed: state === 'running' ? null : s.observed, checkpoint: aprilAndMay } : s)),
  };
};

describe('the viewer shows a running subtask’s checkpointed coverage', () => {
  it('draws what B has checkpointed, 1 April up to 1 June, and says so in its words', () => {
    const b = pictureOf(withB('running')).subtasks.find((s) => s.id === 'B');
    expect(b?.checkpointed).toHaveLength(1);
    expect(b?.checkpointed[0]?.from).toBeCloseTo(day(90), 12);
    expect(b?.checkpointed[0]?.to).toBeCloseTo(day(151), 12);
    expect(b?.observed).toEqual([]);
    expect(b?.checkpointedText).toBe('1 Apr 2025 – 31 May 2025 (12 records)');
    expect(b && subtaskText(b)).toContain('\nCheckpointed so far: 1 Apr 2025 – 31 May 2025 (12 records).');
  });

  it('shows no checkpoint once the subtask has ended: its outcome is drawn instead', () => {
    const b = pictureOf(withB('timed_out')).subtasks.find((s) => s.id === 'B');
    expect(b?.checkpointed).toEqual([]);
    expect(b?.checkpointedText).toBeUndefined();
    expect(b && subtaskText(b)).not.toContain('Checkpointed');
  });
});
