import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RunRequestInput } from '../../lib/contract';
import { allowanceOf, validateRunRequest } from '../../lib/domain';
import { createTestAllowance } from '../../lib/testing';
import { PLAN_OPTIONS, testCatalog } from './fixtures';

/** A one-subtask request whose subtask has `budget`, inside a run of `run`. */
const request = (budget: { modelCalls: number; estimatedCostPerCall: number }, run: { modelCalls: number; costLimit: number }): RunRequestInput =>
  ({
    goal: 'notes of the key accounts',
    universe: { dimension: 'ids', ids: ['acc-1'] },
    subtasks: [{ id: 'CRM', worker: 'scout-crm', scope: { ids: ['acc-1'] }, deadlineSeconds: 25, budget }],
    budget: run,
  }) as unknown as RunRequestInput;

describe('allowanceOf: calls × estimated cost per call', () => {
  it('hand-worked values', () => {
    expect(allowanceOf({ modelCalls: 4, estimatedCostPerCall: 7 })).toEqual({ modelCalls: 4, cost: 28 });
    expect(allowanceOf({ modelCalls: 3, estimatedCostPerCall: 250 })).toEqual({ modelCalls: 3, cost: 750 });
    // Free calls: the count still limits them, the cost cannot.
    expect(allowanceOf({ modelCalls: 5, estimatedCostPerCall: 0 })).toEqual({ modelCalls: 5, cost: 0 });
    // No budget, no spending.
    expect(allowanceOf(undefined)).toEqual({ modelCalls: 0, cost: 0 });
  });

  it('every call at its estimate fits exactly: the last call empties the cost, one more would not fit', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000 }), fc.integer({ min: 1, max: 10_000 }), (modelCalls, estimatedCostPerCall) => {
        const { cost } = allowanceOf({ modelCalls, estimatedCostPerCall });
        let left = cost;
        for (let call = 0; call < modelCalls; call += 1) {
          expect(left).toBeGreaterThanOrEqual(estimatedCostPerCall);
          left -= estimatedCostPerCall;
        }
        expect(left).toBe(0);
        expect(left).toBeLessThan(estimatedCostPerCall);
      }),
    );
  });

  it('the planner refuses a subtask whose allowance is over the run cost limit by one unit, and accepts it at the limit', () => {
    // 4 calls × 7 = 28.
    expect(validateRunRequest(request({ modelCalls: 4, estimatedCostPerCall: 7 }, { modelCalls: 10, costLimit: 28 }), testCatalog, PLAN_OPTIONS).ok).toBe(true);
    const over = validateRunRequest(request({ modelCalls: 4, estimatedCostPerCall: 7 }, { modelCalls: 10, costLimit: 27 }), testCatalog, PLAN_OPTIONS);
    expect(!over.ok && over.problems.map(({ code, path }) => ({ code, path }))).toEqual([
      { code: 'budget_exceeds_run', path: 'subtasks.0.budget.estimatedCostPerCall' },
    ]);
  });

  it('/testing counts down the same allowance: nothing used yet, so the whole 2 × 7 is left', () => {
    const allowance = createTestAllowance({ modelCalls: 2, estimatedCostPerCall: 7 });
    expect(allowance.usage()).toEqual({ modelCalls: 0, estimatedCost: 0 });
    expect(allowanceOf(allowance.budget)).toEqual({ modelCalls: 2, cost: 14 });
  });
});
