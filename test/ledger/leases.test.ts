import { describe, expect, it } from 'vitest';
import { BLOCK_FLOOR_CALLS, BLOCK_LEASE_MS, blockSize, type BlockSizing } from '../../lib/ledger/leases';

const fresh: BlockSizing = {
  cost: 7,
  availableCalls: 100_000,
  availableCost: 10_000_000,
  runCallsLeft: 5_000,
  runCostLeft: 1_000_000,
  previousCalls: 0,
  previousCost: 0,
  previousMs: 0,
};

describe('blockSize', () => {
  it('asks for the floor before the run has a rate: 10 calls and 10 calls of cost', () => {
    expect(BLOCK_FLOOR_CALLS).toBe(10);
    expect(blockSize(fresh)).toEqual({ calls: 10, cost: 70 });
  });

  it("asks for the previous block's rate times the 120-s lease", () => {
    expect(BLOCK_LEASE_MS).toBe(120_000);
    // 60 calls costing 420 in 6 s: 10 calls/s and 70/s, so 1,200 calls and 8,400 for 120 s.
    expect(blockSize({ ...fresh, previousCalls: 60, previousCost: 420, previousMs: 6_000 })).toEqual({ calls: 1_200, cost: 8_400 });
  });

  it('takes at most half of what the day can still grant, rounded up, and at least this one call', () => {
    expect(blockSize({ ...fresh, availableCalls: 5, availableCost: 1_000 })).toEqual({ calls: 3, cost: 70 });
    expect(blockSize({ ...fresh, availableCalls: 1, availableCost: 1_000 })).toEqual({ calls: 1, cost: 70 });
    // Half the cost left (6) cannot pay a call of 9; the block still pays this call.
    expect(blockSize({ ...fresh, cost: 9, availableCost: 12 })).toEqual({ calls: 10, cost: 9 });
  });

  it("never holds more than the run's own remaining budget", () => {
    expect(blockSize({ ...fresh, runCallsLeft: 4, runCostLeft: 30 })).toEqual({ calls: 4, cost: 30 });
  });

  it("without an allowance, is the run's whole remaining budget", () => {
    expect(blockSize({ ...fresh, availableCalls: Infinity, availableCost: Infinity })).toEqual({ calls: 5_000, cost: 1_000_000 });
  });
});
