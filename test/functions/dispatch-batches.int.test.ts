import { describe, expect, it } from 'vitest';
import { BatchNotFound } from '../../lib/ledger/errors';
import { acceptedForDispatch, pipeline } from './support';

/**
 * Dispatch and LoadBatch on a round, over the real planner, ledger and queues: a deployment with
 * batches of one makes the half-year request (A with a 60 s deadline, B with 90 s) a round of two batches.
 */
const p = pipeline('fn-batches', { batchSubtasks: 1 });

/** Accepted at T0, dispatched 2.5 s later. */
const acceptedRun = () => acceptedForDispatch(p.get());

describe('dispatch writes every round as batches', () => {
  it('writes each batch’s subtasks with their absolute deadlines and returns only the batch descriptors', async () => {
    const { tenantId, runId } = await acceptedRun();

    const output = await p.get().dispatch({ runId, tenantId, round: 1 });

    expect(output).toEqual({
      runId,
      tenantId,
      round: 1,
      batches: [
        { round: 1, batch: 0 },
        { round: 1, batch: 1 },
      ],
    });
    // Dispatched at T0 + 2.5 s: A's 60 s end at T0 + 62.5 s, B's 90 s at T0 + 92.5 s.
    expect(await p.get().ledger.readBatch({ tenantId, runId, round: 1, batch: 0 })).toEqual([{ subtaskId: 'A', deadline: '2040-06-01T12:01:02.500Z' }]);
    expect(await p.get().ledger.readBatch({ tenantId, runId, round: 1, batch: 1 })).toEqual([{ subtaskId: 'B', deadline: '2040-06-01T12:01:32.500Z' }]);
  });

  it('answers a retried Task with the same batches, and the same batch items', async () => {
    const { tenantId, runId } = await acceptedRun();
    const first = await p.get().dispatch({ runId, tenantId, round: 1 });
    p.get().clock.moveTo(9_500);
    const retry = await p.get().dispatch({ runId, tenantId, round: 1 });

    expect(retry).toEqual(first);
    expect(await p.get().ledger.readBatch({ tenantId, runId, round: 1, batch: 1 })).toEqual([{ subtaskId: 'B', deadline: '2040-06-01T12:01:32.500Z' }]);
  });

  it('LoadBatch answers the batch as the per-subtask Map’s items; a batch never written is BatchNotFound', async () => {
    const { tenantId, runId } = await acceptedRun();
    await p.get().dispatch({ runId, tenantId, round: 1 });

    expect(await p.get().deadline({ action: 'batch', runId, tenantId, round: 1, batch: 1 })).toEqual({
      items: [{ runId, tenantId, subtaskId: 'B', deadline: '2040-06-01T12:01:32.500Z' }],
    });
    await expect(p.get().deadline({ action: 'batch', runId, tenantId, round: 1, batch: 2 })).rejects.toBeInstanceOf(BatchNotFound);
  });
});
