import { describe, expect, it } from 'vitest';
import type { RunRequestInput } from '../../lib/contract';
import { E2E_BATCH_SUBTASKS } from './batch-size';
import { runToEnd, subtask } from './target';

/*
 * One round path (docs/deadlines.md): the suite's deployment runs every round in batches of
 * `batchSubtasks` (5), each batch a child execution started by the run's StartBatch. The runs
 * below have 23 subtasks, so their first round is five batches (5, 5, 5, 5, 3); the second run's
 * 12 retries are three (5, 5, 2). Neither result depends on the batching; the batches are what
 * the run exercises, and a broken batch path fails the run.
 */

const COUNT = 23;
const ids = Array.from({ length: COUNT }, (_, i) => `u${String(i + 1).padStart(2, '0')}`);

const request = (goal: string, crashing: number): RunRequestInput => ({
  goal,
  universe: { dimension: 'ids', ids },
  subtasks: ids.map((id, i) => ({
    id: `S${String(i + 1).padStart(2, '0')}`,
    worker: 'chaos',
    scope: { ids: [id] },
    // The first `crashing` subtasks claim, then go silent past their deadline; their retries run clean.
    ...(i < crashing ? { input: { fault: 'crash', faultAttempts: 'first' }, deadlineSeconds: 8 } : { deadlineSeconds: 30 }),
    budget: { modelCalls: 1, estimatedCostPerCall: 0 },
  })),
  policy: { retry: { timed_out: 1, invalid: 0, empty: 0 }, maxRounds: 2 },
  budget: { modelCalls: COUNT * 2, costLimit: 1 },
});

describe('a run of several batches per round: child executions', () => {
  it('the suite runs rounds in batches of 5', () => {
    // What the runs below rely on: 23 and 12 both need several batches.
    expect(E2E_BATCH_SUBTASKS).toBe(5);
  });

  it('23 subtasks in five batches all finish: the run succeeds with complete coverage', async () => {
    const run = await runToEnd(request('Batched: 23 ids, one subtask each', 0));

    expect(run.status).toBe('succeeded');
    expect(run.answer?.coverage.complete).toBe(true);
    expect(run.subtasks).toHaveLength(COUNT);
    expect(run.subtasks.every((s) => s.state === 'ok' && s.round === 1)).toBe(true);
  });

  it('12 subtasks time out in the batched first round and their retries succeed in a batched second round', async () => {
    const run = await runToEnd(request('Batched: 12 of 23 time out, then are retried', 12));

    expect(run.status).toBe('succeeded');
    expect(run.answer?.coverage.complete).toBe(true);
    expect(run.subtasks).toHaveLength(COUNT + 12);
    for (let i = 1; i <= 12; i += 1) {
      const id = `S${String(i).padStart(2, '0')}`;
      expect(subtask(run, id).state).toBe('timed_out');
      expect(subtask(run, `${id}.r2`)).toMatchObject({ state: 'ok', round: 2 });
    }
    for (let i = 13; i <= COUNT; i += 1) expect(subtask(run, `S${String(i).padStart(2, '0')}`).state).toBe('ok');
  });
});
