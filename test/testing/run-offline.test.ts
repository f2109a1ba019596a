import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createTestAllowance, createTestClock, runOffline } from '../../lib/testing';
import { createRegistry, defineWorker, fileSource, userText } from '../../lib/workers';

/**
 * A paths kind built for these tests: it reads the assigned files (or the lines `only` names),
 * skips the files `skip` names, asks the model `calls` times, and can wait for its deadline.
 * a.ts has 3 lines, b.ts 4: reading both whole is 7 lines.
 */
const FILES: Record<string, readonly string[]> = { 'a.ts': ['one', '// TODO two', 'three'], 'b.ts': ['1', '2', '3', '4'] };
const START = '2025-06-01T12:00:00.000Z';

const Input = z.strictObject({
  skip: z.array(z.string()).default([]),
  only: z.tuple([z.int(), z.int()]).optional(),
  calls: z.int().default(0),
  waitForDeadline: z.boolean().default(false),
  blob: z.int().default(0),
});

let started: () => void = () => undefined;
let onRead: () => void = () => undefined;

const reader = defineWorker({
  kind: 'reader',
  dimension: 'paths',
  label: 'repository',
  recordNoun: 'lines',
  input: Input,
  output: z.object({ lines: z.int(), blob: z.string().optional() }),
  sources: {
    repo: fileSource({
      description: 'files of the repository',
      load: async (path) => {
        onRead();
        return FILES[path] ?? [];
      },
    }),
  },
  offlineScripts: { think: () => ({ text: 'ok' }) },
  merge: () => ({}),
  run: async (ctx) => {
    started();
    const { skip, only, calls, waitForDeadline, blob } = ctx.assignment.input;
    for (let i = 0; i < calls; i += 1)
      await ctx.model.call({ task: 'think', messages: [userText('think')], estimatedCost: ctx.assignment.allowance.estimatedCostPerCall });
    if (waitForDeadline) await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
    let lines = 0;
    for (const { path } of ctx.assignment.scope.files) {
      if (skip.includes(path)) continue;
      lines += (await ctx.tools.repo(only ? { path, lines: only } : { path })).length;
    }
    return blob > 0 ? { lines, blob: 'x'.repeat(blob) } : { lines };
  },
});
const registry = createRegistry([reader]);
const both = { files: [{ path: 'a.ts' }, { path: 'b.ts' }] };

describe('runOffline records what the tools read and reconciles it', () => {
  it('reads both files whole: ok, 7 lines observed, coverage complete', async () => {
    const { outcome, coverage } = await runOffline({ registry, worker: 'reader', assigned: both });
    expect(outcome).toEqual({
      subtaskId: 'S1',
      state: 'ok',
      observed: { files: [{ path: 'a.ts' }, { path: 'b.ts' }], recordCount: 7 },
      sources: ['a.ts', 'b.ts'],
      sourcesReached: 2,
      findings: { lines: 7 },
      usage: { modelCalls: 0, estimatedCost: 0 },
      refusals: [],
    });
    expect(coverage).toMatchObject({ complete: true, degradedReason: [], gaps: [], partitions: 1 });
  });

  it('leaves b.ts unread: the observation lacks it and coverage has a lines_not_inspected gap naming it', async () => {
    const { outcome, coverage } = await runOffline({ registry, worker: 'reader', assigned: both, input: { skip: ['b.ts'] } });
    expect(outcome).toMatchObject({ state: 'ok', observed: { files: [{ path: 'a.ts' }], recordCount: 3 } });
    expect(coverage.complete).toBe(false);
    expect(coverage.gaps).toEqual([{ kind: 'observed', subtaskId: 'S1', status: 'unchecked', files: [{ path: 'b.ts' }] }]);
    expect(coverage.problems.map((p) => [p.code, p.files])).toEqual([['lines_not_inspected', [{ path: 'b.ts' }]]]);
  });

  it('reads lines 1-2 of lines 1-4: the gap names lines 3-4', async () => {
    const { outcome, coverage } = await runOffline({
      registry,
      worker: 'reader',
      assigned: { files: [{ path: 'b.ts', lines: [[1, 4]] }] },
      input: { only: [1, 2] },
    });
    expect(outcome.observed).toEqual({ files: [{ path: 'b.ts', lines: [[1, 2]] }], recordCount: 2 });
    expect(coverage.gaps).toEqual([{ kind: 'observed', subtaskId: 'S1', status: 'unchecked', files: [{ path: 'b.ts', lines: [[3, 4]] }] }]);
  });

  it('records a request outside the assignment as a refusal', async () => {
    const { outcome } = await runOffline({ registry, worker: 'reader', assigned: { files: [{ path: 'b.ts', lines: [[1, 2]] }] }, input: { only: [1, 3] } });
    expect(outcome).toMatchObject({
      state: 'invalid',
      reason: 'worker threw ScopeViolation',
      refusals: [{ tool: 'repo', requested: 'b.ts#L1-L3', reason: 'outside the assigned lines 1-2 of b.ts' }],
    });
  });

  it('stores findings as the ledger does: over 64 KiB they are dropped and the outcome is invalid', async () => {
    const { outcome } = await runOffline({ registry, worker: 'reader', assigned: both, input: { blob: 70_000 } });
    expect(outcome.state).toBe('invalid');
    expect(outcome.findings).toBeUndefined();
    expect(outcome.reason).toMatch(/^findings of 70\d{3} bytes exceed the 65536-byte bound and were not stored$/);
  });
});

describe('the in-memory allowance', () => {
  it('charges each model call at the fixed estimate and refuses the third of two', async () => {
    const ok = await runOffline({ registry, worker: 'reader', assigned: both, input: { calls: 2 }, budget: { modelCalls: 2, estimatedCostPerCall: 7 } });
    expect(ok.outcome).toMatchObject({ state: 'ok', usage: { modelCalls: 2, estimatedCost: 14 } });
    const over = await runOffline({ registry, worker: 'reader', assigned: both, input: { calls: 3 }, budget: { modelCalls: 2, estimatedCostPerCall: 7 } });
    expect(over.outcome).toMatchObject({ state: 'invalid', reason: 'budget exhausted: subtask calls', usage: { modelCalls: 2, estimatedCost: 14 } });
  });

  it('is shared by the runs given it, as the ledger counters are by the generations of a claim', async () => {
    const allowance = createTestAllowance({ modelCalls: 3, estimatedCostPerCall: 5 });
    await runOffline({ registry, worker: 'reader', assigned: both, input: { calls: 2 }, allowance });
    const second = await runOffline({ registry, worker: 'reader', assigned: both, input: { calls: 2 }, allowance });
    // 2 calls, then 1 more before the allowance runs out: 3 calls at 5 in all.
    expect(second.outcome).toMatchObject({ state: 'invalid', reason: 'budget exhausted: subtask calls', usage: { modelCalls: 3, estimatedCost: 15 } });
    expect(allowance.usage()).toEqual({ modelCalls: 3, estimatedCost: 15 });
  });
});

describe('deadlines on a test clock', () => {
  it('stops a worker when the clock passes its deadline, and records the seal', async () => {
    const clock = createTestClock(START);
    const running = new Promise<void>((resolve) => (started = resolve));
    const pending = runOffline({ registry, worker: 'reader', assigned: both, input: { waitForDeadline: true }, deadlineInMs: 30_000, clock });
    await running;
    clock.advance(29_999);
    expect(clock.now()).toBe(Date.parse('2025-06-01T12:00:29.999Z'));
    clock.advance(1);
    const { outcome, reported, coverage } = await pending;
    expect(reported).toMatchObject({ state: 'timed_out', reason: 'the deadline 2025-06-01T12:00:30.000Z passed before the worker finished' });
    expect(outcome).toEqual({
      subtaskId: 'S1',
      state: 'timed_out',
      observed: null,
      sources: [],
      sourcesReached: 0,
      usage: { modelCalls: 0, estimatedCost: 0 },
      reason: 'deadline 2025-06-01T12:00:30.000Z passed; claimed by generation 1 (worker offline) but no result arrived',
      refusals: [],
    });
    expect(coverage).toMatchObject({ complete: false, degradedReason: ['S1:timed_out'] });
  });

  it('a read that moves the clock past the deadline halts the worker: timed_out', async () => {
    const clock = createTestClock(START);
    onRead = () => clock.advance(10_000);
    try {
      const { outcome } = await runOffline({ registry, worker: 'reader', assigned: both, deadlineInMs: 15_000, clock });
      expect(outcome).toMatchObject({
        state: 'timed_out',
        reason: 'deadline 2025-06-01T12:00:15.000Z passed; claimed by generation 1 (worker offline) but no result arrived',
      });
    } finally {
      onRead = () => undefined;
    }
  });

  it('never claims a subtask whose deadline has already passed', async () => {
    const { outcome, reported } = await runOffline({ registry, worker: 'reader', assigned: both, deadlineInMs: 0, clock: createTestClock(START) });
    expect(reported).toBeUndefined();
    expect(outcome).toMatchObject({ state: 'timed_out', reason: 'deadline 2025-06-01T12:00:00.000Z passed; never claimed: no worker picked it up' });
  });

  it('closes a subtask whose run is cancelled while it runs', async () => {
    const clock = createTestClock(START);
    const cancel = new AbortController();
    const running = new Promise<void>((resolve) => (started = resolve));
    const pending = runOffline({ registry, worker: 'reader', assigned: both, input: { waitForDeadline: true }, clock, signal: cancel.signal });
    await running;
    clock.advance(5_000);
    cancel.abort();
    const { outcome, reported } = await pending;
    expect(reported?.state).toBe('cancelled');
    expect(outcome).toMatchObject({
      state: 'cancelled',
      observed: null,
      reason: 'run cancelled at 2025-06-01T12:00:05.000Z; claimed by generation 1 (worker offline) but no result arrived',
    });
  });
});

describe('createTestClock', () => {
  it('fires each timer once the clock reaches it, earliest first, and never a cancelled one', () => {
    const clock = createTestClock(0);
    const fired: string[] = [];
    clock.setTimer(() => fired.push(`b@${clock.now()}`), 200);
    clock.setTimer(() => fired.push(`a@${clock.now()}`), 100);
    const cancel = clock.setTimer(() => fired.push('cancelled'), 150);
    cancel();
    clock.advance(99);
    expect(fired).toEqual([]);
    clock.advance(1);
    expect(fired).toEqual(['a@100']);
    clock.advance(1_000);
    expect(fired).toEqual(['a@100', 'b@200']);
    expect(clock.now()).toBe(1_100);
  });

  it('refuses a start that is not a time and a step back', () => {
    expect(() => createTestClock('not a date')).toThrow(RangeError);
    expect(() => createTestClock(0).advance(-1)).toThrow(RangeError);
  });
});
