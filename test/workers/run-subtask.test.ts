import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createRegistry,
  EstimateMismatch,
  InvalidAssignment,
  keyedSource,
  runSubtask,
  UnknownWorkerKind,
  userText,
  type WorkerContext,
  type DefinedWorker,
} from '../../lib/workers';
import { READ_NOTHING } from '../../lib/domain';
import { dispatched, failingPort, FakeBudgetExhausted, memoryAllowance, offlineModels, testKind } from './support/harness';

const models = offlineModels();
const ONE = { ids: ['a'] };

/** What a test kind's source and worker do; each test writes only the part it needs. */
interface Behaviour {
  readonly rows?: readonly { id: string }[];
  /** Resolves with the source's rows; by default at once. */
  readonly load?: (signal: AbortSignal) => Promise<readonly { id: string }[]>;
  /** Returns the worker's output, which may be invalid on purpose: the SDK validates it. */
  readonly run?: (ctx: { read: () => Promise<readonly unknown[]>; call: () => Promise<unknown> }) => Promise<unknown>;
}

/** A one-source ids kind whose worker reads its id and reports how many records it saw. */
const kindWith = (behaviour: Behaviour): DefinedWorker =>
  testKind({
    kind: 'probe',
    dimension: 'ids',
    output: z.object({ records: z.int().min(0) }),
    sources: {
      read: keyedSource({
        description: 'read one id',
        args: z.object({ id: z.string() }),
        idOf: (args) => args.id,
        load: async (_args, { signal }) => ({ source: 'probe', rows: await (behaviour.load ?? (async () => behaviour.rows ?? [{ id: 'r1' }]))(signal) }),
      }),
    },
    run: async (ctx) => {
      const read = () => ctx.tools.read({ id: 'a' });
      const call = () => ctx.model.call({ messages: [userText('{"id":"a"}')], tools: [ctx.tools.read.spec] });
      if (behaviour.run) return (await behaviour.run({ read, call })) as { records: number };
      return { records: (await read()).length };
    },
  });

/** A kind with no sources whose findings are `{}`: only what its `run` does matters. */
const bareKind = (kind: string, body: (ctx: WorkerContext<'ids', unknown, unknown>) => Promise<void>): DefinedWorker =>
  testKind({
    kind,
    dimension: 'ids',
    output: z.object({}),
    sources: {},
    run: async (ctx) => {
      await body(ctx);
      return {};
    },
  });

const run = (behaviour: Behaviour, subtask: Partial<Parameters<typeof dispatched>[0]> = {}, options: Partial<Parameters<typeof runSubtask>[0]> = {}) =>
  runSubtask({
    subtask: dispatched({ id: 'S', worker: 'probe', assigned: ONE, ...subtask }),
    registry: createRegistry([kindWith(behaviour)]),
    budget: memoryAllowance(3).port(),
    models,
    ...options,
  });

describe('the SDK classifies the outcome (the Scout example)', () => {
  it('is ok with records and valid output', async () => {
    const outcome = await run({ rows: [{ id: 'r1' }, { id: 'r2' }] });
    expect(outcome).toMatchObject({ state: 'ok', observed: { ids: ['a'], recordCount: 2 }, sources: ['probe'], findings: { records: 2 } });
  });

  it('is invalid when the output fails its schema, without storing the output', async () => {
    const outcome = await run({ run: async () => ({ records: -1 }) });
    expect(outcome.state).toBe('invalid');
    expect(outcome.reason).toBe('output failed its schema: records Too small: expected number to be >=0');
    expect(outcome.findings).toBeUndefined();
  });

  it('is empty with sourcesReached kept when the source answered with nothing', async () => {
    const outcome = await run({ rows: [] });
    expect(outcome).toMatchObject({ state: 'empty', sourcesReached: 1, observed: { ids: [], recordCount: 0 }, reason: 'no records in 1 source reached' });
  });

  it('is empty with sourcesReached 0 when the worker asked its source and the source could not be reached', async () => {
    const unreachable = async () => {
      throw new Error('connect ECONNREFUSED');
    };
    const outcome = await run({
      load: unreachable,
      run: async ({ read }) => ({ records: (await read().catch(() => [])).length }),
    });
    expect(outcome).toMatchObject({ state: 'empty', sourcesReached: 0, observed: { ids: [], recordCount: 0 }, reason: 'no source was reachable' });
  });

  it('is ok with an empty observation when the worker chose to ask no source: nothing read is not an unreachable source', async () => {
    const outcome = await run({ run: async () => ({ records: 0 }) });
    expect(outcome).toMatchObject({ state: 'ok', sourcesReached: 0, observed: { ids: [], recordCount: 0 }, findings: { records: 0 }, reason: READ_NOTHING });
  });

  it('is invalid naming the error, never its message, when the worker throws', async () => {
    const outcome = await run({
      run: async () => {
        throw new RangeError('account 4921-0033 overdrawn by 12.50');
      },
    });
    expect(outcome.state).toBe('invalid');
    expect(outcome.reason).toBe('worker threw RangeError');
  });

  it('is invalid when the input fails the kind schema, before the worker starts', async () => {
    let started = false;
    const outcome = await run({ run: async () => ((started = true), { records: 1 }) }, { input: { extra: true } });
    expect(started).toBe(false);
    expect(outcome.state).toBe('invalid');
    expect(outcome.reason).toMatch(/^input failed its schema: \(input\) Unrecognized key: "extra"/);
  });

  it('is invalid when the scope is not in the kind dimension', async () => {
    const outcome = await run({}, { assigned: { from: '2025-01-01', toExclusive: '2025-02-01' } });
    expect(outcome).toMatchObject({ state: 'invalid', reason: 'the assigned scope is not in the ids dimension' });
  });

  it('is invalid when the subtask names a model the deployment does not allow', async () => {
    const outcome = await run({}, { model: 'anthropic.claude-3-5-haiku-20241022-v1:0' });
    expect(outcome.state).toBe('invalid');
    expect(outcome.reason).toBe('model "anthropic.claude-3-5-haiku-20241022-v1:0" is not allowed here (allowed: offline, offline:broaden)');
  });

  it('gives the worker a frozen assignment', async () => {
    const mutating = await runSubtask({
      subtask: dispatched({ id: 'S', worker: 'mutates', assigned: ONE }),
      registry: createRegistry([
        bareKind('mutates', async (ctx) => {
          (ctx.assignment.scope.ids as string[]).push('b');
        }),
      ]),
      budget: memoryAllowance(1).port(),
      models,
    });
    // Pushing onto a frozen array throws in ES modules (strict mode).
    expect(mutating.reason).toBe('worker threw TypeError');
  });
});

describe('deadlines and cancellation', () => {
  it('aborts a long tool call at the deadline and records timed_out, not ok', async () => {
    let loadSettled = 'pending';
    const outcome = await run(
      {
        load: async (signal) => {
          try {
            await sleep(30_000, undefined, { signal });
            loadSettled = 'finished';
          } catch (error) {
            loadSettled = `aborted by ${String((signal.reason as Error).name)} (${(error as Error).name})`;
            throw error;
          }
          return [{ id: 'late' }];
        },
      },
      { deadlineInMs: 80 },
    );
    // Node delivers a timer's abort on the next turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    expect(outcome.state).toBe('timed_out');
    expect(outcome.reason).toMatch(/^the deadline .* passed before the worker finished$/);
    expect(outcome.findings).toBeUndefined();
    expect(outcome.observed).toEqual({ ids: [], recordCount: 0 });
    expect(loadSettled).toBe('aborted by DeadlineExceeded (AbortError)');
  });

  it('stops waiting at the deadline even when a source ignores the signal', async () => {
    let resolveLoad: (rows: { id: string }[]) => void = () => undefined;
    const ignoring = new Promise<{ id: string }[]>((resolve) => (resolveLoad = resolve));
    const outcome = await run({ load: () => ignoring }, { deadlineInMs: 50 });
    resolveLoad([{ id: 'too-late' }]);
    expect(outcome.state).toBe('timed_out');
    expect(outcome.observed).toEqual({ ids: [], recordCount: 0 });
  });

  it('records timed_out without running a worker whose deadline already passed', async () => {
    let started = false;
    const outcome = await run({ run: async () => ((started = true), { records: 1 }) }, { deadlineInMs: -1 });
    expect(started).toBe(false);
    expect(outcome).toMatchObject({ state: 'timed_out', observed: null, sourcesReached: 0 });
  });

  it('records cancelled when the run is cancelled from outside mid-call', async () => {
    const controller = new AbortController();
    const outcome = await run(
      {
        load: async (signal) => {
          setTimeout(() => controller.abort(new Error('run cancelled')), 10);
          await sleep(30_000, undefined, { signal });
          return [];
        },
      },
      {},
      { signal: controller.signal },
    );
    expect(outcome).toMatchObject({ state: 'cancelled', reason: 'the run was cancelled' });
  });

  it('gives the worker its remaining time', async () => {
    const seen: number[] = [];
    const kind = bareKind('clock', async (ctx) => void seen.push(ctx.remainingMs()));
    const start = Date.parse('2025-06-01T00:00:00Z');
    await runSubtask({
      subtask: { id: 'T', worker: 'clock', round: 1, assigned: ONE, deadline: '2025-06-01T00:00:45Z', budget: { modelCalls: 1, estimatedCostPerCall: 1 } },
      registry: createRegistry([kind]),
      budget: memoryAllowance(1).port(),
      models,
      now: () => start,
    });
    expect(seen).toEqual([45_000]);
  });
});

describe('model calls and the budget port', () => {
  it('counts each reserved call at the assignment estimate', async () => {
    const outcome = await run({ run: async ({ call }) => (await call(), await call(), { records: 0 }) });
    expect(outcome.usage).toEqual({ modelCalls: 2, estimatedCost: 14 });
  });

  it('refuses a call whose estimate differs from the assignment, before reserving it', async () => {
    const allowance = memoryAllowance(3);
    let refusal: unknown;
    const kind = bareKind('cheapskate', async (ctx) => {
      await ctx.model.call({ messages: [userText('hi')], task: 'anything', estimatedCost: 3 }).catch((error: unknown) => (refusal = error));
    });
    const outcome = await runSubtask({
      subtask: dispatched({ id: 'C', worker: 'cheapskate', assigned: ONE }),
      registry: createRegistry([kind]),
      budget: allowance.port(),
      models,
    });
    expect(refusal).toBeInstanceOf(EstimateMismatch);
    expect(allowance.used).toBe(0);
    expect(outcome.refusals).toEqual([{ tool: 'model', requested: 'estimatedCost 3', reason: 'the assignment fixes 7 per call' }]);
  });

  it('makes the outcome invalid with the exhausted limit when the worker lets the error escape', async () => {
    const outcome = await run(
      { run: async ({ call }) => (await call(), await call(), await call(), await call(), { records: 1 }) },
      {},
      { budget: memoryAllowance(2).port() },
    );
    expect(outcome).toMatchObject({ state: 'invalid', reason: 'budget exhausted: subtask calls', usage: { modelCalls: 2, estimatedCost: 14 } });
  });

  it('keeps a valid result the worker finished with after exhaustion, and stops its tools', async () => {
    let readAfter = 'not tried';
    const outcome = await run(
      {
        run: async ({ call, read }) => {
          const rows = await read();
          const exhausted = await call().then(
            () => 'no',
            (error: unknown) => (error instanceof FakeBudgetExhausted ? 'yes' : 'other'),
          );
          readAfter = await read().then(
            () => 'read',
            (error: unknown) => (error as Error).name,
          );
          return { records: exhausted === 'yes' ? rows.length : -1 };
        },
      },
      {},
      { budget: memoryAllowance(0).port() },
    );
    expect(readAfter).toBe('BudgetExhausted');
    expect(outcome).toMatchObject({ state: 'ok', findings: { records: 1 }, usage: { modelCalls: 0, estimatedCost: 0 } });
  });

  it.each(['LeaseLost', 'RunCancelled'])('rethrows %s from the port to the caller', async (name) => {
    await expect(run({ run: async ({ call }) => (await call(), { records: 1 }) }, {}, { budget: failingPort(name) })).rejects.toMatchObject({ name });
  });

  it('rethrows an infrastructure error even when the worker swallows it', async () => {
    await expect(
      run({ run: async ({ call }) => (await call().catch(() => undefined), { records: 1 }) }, {}, { budget: failingPort('LeaseLost') }),
    ).rejects.toMatchObject({
      name: 'LeaseLost',
    });
  });

  it('treats the ledger seeing the deadline first as the deadline', async () => {
    const outcome = await run({ run: async ({ call }) => (await call(), { records: 1 }) }, {}, { budget: failingPort('DeadlinePassed') });
    expect(outcome.state).toBe('timed_out');
  });
});

describe('what runSubtask refuses to run', () => {
  it('throws InvalidAssignment for a subtask without an absolute deadline', async () => {
    const { deadline: _removed, ...noDeadline } = dispatched({ id: 'S', worker: 'probe', assigned: ONE });
    await expect(
      runSubtask({ subtask: noDeadline, registry: createRegistry([kindWith({})]), budget: memoryAllowance(1).port(), models }),
    ).rejects.toBeInstanceOf(InvalidAssignment);
  });

  it('throws UnknownWorkerKind for a kind the registry does not have', async () => {
    await expect(run({}, { worker: 'nobody' })).rejects.toBeInstanceOf(UnknownWorkerKind);
  });
});
