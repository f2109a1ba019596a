import { describe, expect, it } from 'vitest';
import { RunResource, type SubtaskView } from '../../lib/contract';
import { checkpointedText, progressLine } from '../../lib/cli/run-output';

const quarter = (id: string, from: string, toExclusive: string, state: SubtaskView['state']) => ({
  id,
  worker: 'tax-statements',
  round: 1,
  questionIds: [],
  required: true,
  assigned: { from, toExclusive },
  state,
  observed: null,
  sources: [],
  sourcesReached: 0,
  usage: { modelCalls: 0, estimatedCost: 0 },
  refusals: [],
});

/** B's worker has read April and May (12 transactions) of its quarter and checkpointed them. */
const aprilAndMay = {
  generation: 1,
  sequence: 1,
  writtenAt: '2040-06-01T12:00:05.000Z',
  covered: [{ from: '2025-04-01', toExclusive: '2025-06-01' }],
  observed: { minDate: '2025-04-01', maxDate: '2025-05-31', recordCount: 12 },
  sources: ['stmt-2025-04', 'stmt-2025-05'],
  sourcesReached: 2,
  usage: { modelCalls: 2, estimatedCost: 14 },
};

/** A run half-way: A ended, B running with a checkpoint, C running without one yet, D timed out after a checkpoint. */
const running = RunResource.parse({
  runId: 'run-live',
  status: 'running',
  goal: 'Total deductible household expenses for tax year 2025',
  createdAt: '2040-06-01T12:00:00.000Z',
  updatedAt: '2040-06-01T12:00:06.000Z',
  universe: { dimension: 'time', from: '2025-01-01', toExclusive: '2026-01-01' },
  round: 1,
  progress: { dispatched: 4, terminal: 2, byState: { ok: 1, running: 2, timed_out: 1 } },
  budget: { modelCalls: 40, costLimit: 500 },
  usage: { modelCalls: 5, estimatedCost: 35 },
  subtasks: [
    { ...quarter('A', '2025-01-01', '2025-04-01', 'ok'), observed: { minDate: '2025-01-01', maxDate: '2025-03-31', recordCount: 18 } },
    { ...quarter('B', '2025-04-01', '2025-07-01', 'running'), checkpoint: aprilAndMay },
    quarter('C', '2025-07-01', '2025-10-01', 'running'),
    {
      ...quarter('D', '2025-10-01', '2026-01-01', 'timed_out'),
      checkpoint: {
        ...aprilAndMay,
        covered: [{ from: '2025-10-01', toExclusive: '2025-11-01' }],
        observed: { minDate: '2025-10-01', maxDate: '2025-10-31', recordCount: 6 },
      },
    },
  ],
  answer: null,
});

describe("the CLI's progress line shows live coverage", () => {
  it('says how far each running subtask has checkpointed, with inclusive dates, and nothing for the others', () => {
    // B covered [04-01, 06-01): as read, 2025-04-01..2025-05-31; C has no checkpoint; A and D have ended.
    expect(progressLine(running)).toBe('round 1 · 2/4 subtasks ended · ok 1, running 2, timed_out 1 · checkpointed B 2025-04-01..2025-05-31 (12 records)');
  });

  it('leaves the line as it was when no running subtask has checkpointed', () => {
    const none = { ...running, subtasks: running.subtasks.filter((s) => s.id !== 'B') };
    expect(progressLine(none)).toBe('round 1 · 2/4 subtasks ended · ok 1, running 2, timed_out 1');
  });

  it('names a single record in the singular', () => {
    const b = running.subtasks[1] as SubtaskView;
    const one = {
      ...b,
      checkpoint: {
        ...aprilAndMay,
        covered: [{ from: '2025-04-01', toExclusive: '2025-04-02' }],
        observed: { minDate: '2025-04-01', maxDate: '2025-04-01', recordCount: 1 },
      },
    };
    expect(checkpointedText('time', one)).toBe('B 2025-04-01..2025-04-01 (1 record)');
    expect(checkpointedText('time', running.subtasks[3] as SubtaskView)).toBeUndefined();
  });
});
