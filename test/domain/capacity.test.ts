import { describe, expect, it } from 'vitest';
import type { RunRequestInput } from '../../lib/contract';
import { capacityWarnings, validateRunRequest } from '../../lib/domain';
import { catalogOf, kindInfo, PLAN_OPTIONS } from './fixtures';

const catalog = catalogOf([kindInfo({ kind: 'ticket-triage', dimension: 'ids', typicalSeconds: 2 }), kindInfo({ kind: 'scout-crm', dimension: 'ids' })]);

const ids = (n: number) => Array.from({ length: n }, (_, i) => `t-${i}`);
const request = (n: number, deadlineSeconds: number, worker = 'ticket-triage'): RunRequestInput => ({
  goal: 'Triage the queue',
  universe: { dimension: 'ids', ids: ids(n) },
  split: { worker, chunkSize: 1, deadlineSeconds, budget: { modelCalls: 1, estimatedCostPerCall: 1 } },
  budget: { modelCalls: 10, costLimit: 10 },
});
const warningsOf = (body: RunRequestInput, capacity: Record<string, number>) => {
  const result = validateRunRequest(body, catalog, { ...PLAN_OPTIONS, capacity });
  if (!result.ok) throw new Error(result.problems[0]?.message);
  return result.warnings;
};

describe('capacity warnings: a kind that cannot finish its subtasks by their deadlines', () => {
  it('200 subtasks of 2 s at 25 at once need 8 waves, 16 s, past a 10 s deadline: 75 cannot finish', () => {
    // ⌈200 / 25⌉ = 8 waves × 2 s = 16 s > 10 s; the first ⌊10 / 2⌋ = 5 waves finish 125, so 75 are late.
    expect(warningsOf(request(200, 10), { 'ticket-triage': 25 })).toEqual([
      {
        code: 'capacity_short',
        worker: 'ticket-triage',
        path: 'split.deadlineSeconds',
        message: '200 ticket-triage subtasks, 25 at a time of about 2 s each, take 8 waves (16 s): 75 cannot finish by their 10 s deadline',
      },
    ]);
  });

  it('no warning when the last wave ends exactly at the deadline: 125 subtasks, 5 waves × 2 s = 10 s', () => {
    expect(warningsOf(request(125, 10), { 'ticket-triage': 25 })).toEqual([]);
    expect(warningsOf(request(126, 10), { 'ticket-triage': 25 }).map((w) => w.message)).toEqual([expect.stringContaining('6 waves (12 s): 1 cannot finish')]);
  });

  it('judges nothing for a kind without a declared duration, or without a known capacity', () => {
    expect(warningsOf(request(1000, 1, 'scout-crm'), { 'scout-crm': 1 })).toEqual([]);
    expect(warningsOf(request(1000, 1), {})).toEqual([]);
    expect(validateRunRequest(request(1000, 1), catalog, PLAN_OPTIONS)).toMatchObject({ ok: true, warnings: [] });
  });

  it('mixed deadlines run earliest first, and the path names the first subtask that cannot make it', () => {
    // Capacity 1, 2 s each, earliest deadline first: the 3 s one ends at 2 s, the 4 s one at 4 s,
    // and the 5 s one at 6 s, late. It is subtasks.0.
    const warnings = capacityWarnings(
      [
        { worker: 'ticket-triage', deadlineSeconds: 5, path: 'subtasks.0.deadlineSeconds' },
        { worker: 'ticket-triage', deadlineSeconds: 4, path: 'subtasks.1.deadlineSeconds' },
        { worker: 'ticket-triage', deadlineSeconds: 3, path: 'subtasks.2.deadlineSeconds' },
      ],
      catalog,
      { 'ticket-triage': 1 },
    );
    expect(warnings).toEqual([
      {
        code: 'capacity_short',
        worker: 'ticket-triage',
        path: 'subtasks.0.deadlineSeconds',
        message: '3 ticket-triage subtasks, 1 at a time of about 2 s each, take 3 waves (6 s): 1 cannot finish by their 5 s deadline',
      },
    ]);
  });
});
