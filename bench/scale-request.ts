import type { RunRequestInput } from '../lib/contract';

/**
 * The no-op run of the scale measurements (`npm run bench -- scale`, and the emulator lane's
 * scale step): an ids universe of `size` ids split with `chunkSize: 1` onto the `chaos` kind with
 * `fault: 'none'`, so each subtask reads its one id and finishes. The request is the same at every
 * size, so only the planner's `MAX_SUBTASKS` decides whether a size is accepted; no retries and
 * one round, so every subtask runs exactly once.
 *
 * @example
 * await tessera.createRun(noOpRunRequest(2000, 'emulator', 600));
 */
export const noOpRunRequest = (size: number, label: string, deadlineSeconds: number): RunRequestInput => ({
  goal: `Scale (${label}): ${size} no-op subtasks`,
  universe: { dimension: 'ids', ids: Array.from({ length: size }, (_, index) => `item-${String(index + 1).padStart(6, '0')}`) },
  split: { chunkSize: 1, worker: 'chaos', input: { fault: 'none' }, deadlineSeconds, budget: { modelCalls: 1, estimatedCostPerCall: 0 }, idPrefix: 'S' },
  policy: { retry: { timed_out: 0, invalid: 0, empty: 0 }, maxRounds: 1 },
  budget: { modelCalls: size, costLimit: 1 },
});
