import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Checkpoint, CheckpointInput } from '../../lib/contract';
import { createRegistry, defineWorker, keyedSource, runSubtask, SubtaskHandedOver, timeSeriesSource, userText, type CheckpointPort } from '../../lib/workers';
import { monthsOf } from '../../examples/app/tax';
import { dispatched, memoryAllowance, offlineModels } from './support/harness';

const models = offlineModels();
type Row = { id: string; postedDate: string; pence: number };
/** Two transactions a month: the 1st (100p) and the 20th (10p), so a month totals 110p. */
const monthRows = (month: string): Row[] => [
  { id: `${month}-a`, postedDate: `${month}-01`, pence: 100 },
  { id: `${month}-b`, postedDate: `${month}-20`, pence: 10 },
];
const Findings = z.object({ pence: z.int(), transactions: z.int() });

/** A statements kind that reads month by month; June's statement never arrives before the deadline. */
const statementsKind = (partialFindings: boolean, months: string[] = [], watch: (signal: AbortSignal) => void = () => undefined) =>
  defineWorker({
    kind: 'slow-statements',
    dimension: 'time',
    label: 'statements',
    recordNoun: 'transactions',
    input: z.strictObject({}),
    output: Findings,
    partialFindings,
    merge: () => ({}),
    sources: {
      statements: timeSeriesSource<Row>({
        description: 'statements',
        dateField: 'postedDate',
        idField: 'id',
        load: async (range, { signal }) => {
          const month = range.from.slice(0, 7);
          months.push(month);
          if (month === '2025-06') await new Promise((resolve) => signal.addEventListener('abort', resolve));
          return [{ source: `stmt-${month}`, rows: monthRows(month) }];
        },
      }),
    },
    run: async (ctx) => {
      watch(ctx.signal);
      const resumeAt = ctx.resumeFrom?.covered.flatMap((s) => ('toExclusive' in s ? [s.toExclusive] : [])).at(-1);
      let findings = ctx.resumeFrom === undefined ? { pence: 0, transactions: 0 } : Findings.parse(ctx.resumeFrom.findings);
      for (const month of monthsOf(ctx.assignment.scope)) {
        if (resumeAt !== undefined && month.toExclusive <= resumeAt) continue;
        const rows = await ctx.tools.statements(month);
        findings = { pence: findings.pence + rows.reduce((sum, r) => sum + r.pence, 0), transactions: findings.transactions + rows.length };
        if (partialFindings) ctx.checkpoint(findings);
      }
      return findings;
    },
  });

const memoryPort = () => {
  const writes: CheckpointInput[] = [];
  const port: CheckpointPort = { write: async (checkpoint) => void writes.push(checkpoint) };
  return { writes, port };
};

const quarterB = (deadlineInMs: number) =>
  dispatched({ id: 'B', worker: 'slow-statements', assigned: { from: '2025-04-01', toExclusive: '2025-07-01' }, deadlineInMs });

const FAST = { everyRecords: 1, everyMs: 50, flushBeforeDeadlineMs: 200 };

describe('checkpoints written by the tool layer', () => {
  it('keeps April and May with their partial findings when June misses the deadline', async () => {
    const { writes, port } = memoryPort();
    const outcome = await runSubtask({
      subtask: quarterB(900),
      registry: createRegistry([statementsKind(true)]),
      models,
      budget: memoryAllowance(4).port(),
      checkpoints: { port, generation: 1, policy: FAST },
    });
    expect(outcome.state).toBe('timed_out');
    const last = writes.at(-1);
    expect(last?.covered).toEqual([{ from: '2025-04-01', toExclusive: '2025-06-01' }]);
    expect(last?.partial).toEqual({
      covered: [{ from: '2025-04-01', toExclusive: '2025-06-01' }],
      observed: { minDate: '2025-04-01', maxDate: '2025-05-20', recordCount: 4 },
      findings: { pence: 220, transactions: 4 },
    });
    // Bounded: sequence numbers count up from 1, within the per-subtask maximum.
    expect(writes.map((w) => w.sequence)).toEqual(writes.map((_, i) => i + 1));
    expect(writes.every((w) => w.generation === 1)).toBe(true);
  });

  it('checkpoints the observation of a kind without partial findings, and no findings', async () => {
    const { writes, port } = memoryPort();
    const outcome = await runSubtask({
      subtask: quarterB(900),
      registry: createRegistry([statementsKind(false)]),
      models,
      budget: memoryAllowance(4).port(),
      checkpoints: { port, generation: 1, policy: FAST },
    });
    expect(outcome.state).toBe('timed_out');
    expect(writes.at(-1)?.covered).toEqual([{ from: '2025-04-01', toExclusive: '2025-06-01' }]);
    expect(writes.some((w) => w.partial !== undefined)).toBe(false);
  });

  it('resumes a redelivered generation after the checkpoint: only June is read, and nothing is counted twice', async () => {
    const months: string[] = [];
    const previous: Checkpoint = {
      generation: 1,
      sequence: 2,
      writtenAt: '2025-06-01T00:00:00.000Z',
      covered: [{ from: '2025-04-01', toExclusive: '2025-06-01' }],
      observed: { minDate: '2025-04-01', maxDate: '2025-05-20', recordCount: 4 },
      sources: [],
      sourcesReached: 0,
      usage: { modelCalls: 0, estimatedCost: 0 },
      partial: {
        covered: [{ from: '2025-04-01', toExclusive: '2025-06-01' }],
        observed: { minDate: '2025-04-01', maxDate: '2025-05-20', recordCount: 4 },
        findings: { pence: 220, transactions: 4 },
      },
    };
    const kind = statementsKind(true, months);
    const { writes, port } = memoryPort();
    const outcome = await runSubtask({
      subtask: dispatched({ id: 'B', worker: 'slow-statements', assigned: { from: '2025-04-01', toExclusive: '2025-06-01' }, deadlineInMs: 5_000 }),
      registry: createRegistry([kind]),
      models,
      budget: memoryAllowance(4).port(),
      checkpoints: { port, generation: 2, previous, policy: FAST },
    });
    // Everything was covered already: the new generation reads nothing and reports the resumed findings.
    expect(months).toEqual([]);
    expect(outcome).toMatchObject({
      state: 'ok',
      findings: { pence: 220, transactions: 4 },
      observed: { minDate: '2025-04-01', maxDate: '2025-05-20', recordCount: 4 },
    });
    expect(writes).toEqual([]);
  });

  it('stops the worker when the ledger answers a checkpoint with a handover: ctx.signal aborts with SubtaskHandedOver, and nothing more is written', async () => {
    const writes: CheckpointInput[] = [];
    let reason: unknown;
    // The store hands over once the checkpoint holds April and May (a hedge started meanwhile).
    const port: CheckpointPort = {
      write: async (checkpoint) => {
        writes.push(checkpoint);
        return { written: false, handedOver: (checkpoint.partial?.observed.recordCount ?? 0) >= 4 };
      },
    };
    const watched = statementsKind(true, [], (signal) => signal.addEventListener('abort', () => (reason = signal.reason)));
    const started = Date.now();
    const run = runSubtask({
      subtask: quarterB(10_000),
      registry: createRegistry([watched]),
      models,
      budget: memoryAllowance(4).port(),
      checkpoints: { port, generation: 1, policy: FAST },
    });
    await expect(run).rejects.toBeInstanceOf(SubtaskHandedOver);
    expect(reason).toBeInstanceOf(SubtaskHandedOver);
    // Long before the 10 s deadline: June's read was stopped by the signal, not the deadline.
    expect(Date.now() - started).toBeLessThan(5_000);
    const last = writes.at(-1);
    expect(last?.partial?.covered).toEqual([{ from: '2025-04-01', toExclusive: '2025-06-01' }]);
    expect(writes.filter((w) => (w.partial?.observed.recordCount ?? 0) >= 4)).toHaveLength(1);
  });

  it('writes no checkpoint for a worker that reads one id and finishes (the no-op path)', async () => {
    const { writes, port } = memoryPort();
    const kind = defineWorker({
      kind: 'one-id',
      dimension: 'ids',
      label: 'one',
      recordNoun: 'records',
      input: z.strictObject({}),
      output: z.object({ n: z.int() }),
      merge: () => ({}),
      sources: {
        read: keyedSource({ description: 'one', args: z.object({ id: z.string() }), idOf: (a) => a.id, load: async () => ({ source: 's', rows: [1] }) }),
      },
      run: async (ctx) => ({ n: (await ctx.tools.read({ id: 'a' })).length }),
    });
    const outcome = await runSubtask({
      subtask: dispatched({ id: 'P', worker: 'one-id', assigned: { ids: ['a'] } }),
      registry: createRegistry([kind]),
      models,
      budget: memoryAllowance(4).port(),
      checkpoints: { port, generation: 1 },
    });
    expect(outcome.state).toBe('ok');
    expect(writes).toEqual([]);
  });
});

describe('the handover window, through runSubtask', () => {
  it('flushes the pending findings before the cut and holds a model call made after the hedge is due until the window closes', async () => {
    const startedAt = Date.now();
    // The hedge is due 1.5 s after the start; the window closes 1 s after that (handoverHoldMs).
    const handoverAtMs = startedAt + 1_500;
    const reservedAt: number[] = [];
    const { writes, port } = memoryPort();
    const kind = defineWorker({
      kind: 'handover-statements',
      dimension: 'time',
      label: 'statements',
      recordNoun: 'transactions',
      input: z.strictObject({}),
      output: Findings,
      partialFindings: true,
      offlineScripts: { 'sum-month': () => ({ text: 'ok' }) },
      merge: () => ({}),
      sources: {
        statements: timeSeriesSource<Row>({
          description: 'statements',
          dateField: 'postedDate',
          idField: 'id',
          load: async (range) => [{ source: `stmt-${range.from.slice(0, 7)}`, rows: monthRows(range.from.slice(0, 7)) }],
        }),
      },
      run: async (ctx) => {
        let findings = { pence: 0, transactions: 0 };
        for (const month of monthsOf(ctx.assignment.scope)) {
          const rows = await ctx.tools.statements(month);
          await ctx.model.call({ messages: [userText('sum the month')], task: 'sum-month' });
          findings = { pence: findings.pence + rows.reduce((sum, r) => sum + r.pence, 0), transactions: findings.transactions + rows.length };
          ctx.checkpoint(findings);
          // After April, until 0.1 s past the instant the hedge is due.
          if (month.from === '2025-04-01') await new Promise((resolve) => setTimeout(resolve, Math.max(0, handoverAtMs + 100 - Date.now())));
        }
        return findings;
      },
    });
    const outcome = await runSubtask({
      subtask: dispatched({ id: 'B', worker: 'handover-statements', assigned: { from: '2025-04-01', toExclusive: '2025-07-01' }, deadlineInMs: 20_000 }),
      registry: createRegistry([kind]),
      models,
      budget: { reserve: async () => void reservedAt.push(Date.now() - startedAt) },
      checkpoints: { port, generation: 1, policy: { handoverHoldMs: 1_000 }, handoverAtMs },
    });
    expect(outcome).toMatchObject({ state: 'ok', findings: { pence: 330, transactions: 6 } });
    // April's call goes at once (no call measured yet, and it is before the cut). April's findings
    // are pending (the 5-s schedule is not due): written 0.25 s before the cut, at 1.25 s.
    expect(writes[0]?.partial?.covered).toEqual([{ from: '2025-04-01', toExclusive: '2025-05-01' }]);
    // May's call comes at 1.6 s, after the 1.5-s instant: it waits until the window closes,
    // 1.5 + 1 = 2.5 s; June's, after the window, goes at once. Three calls.
    expect(reservedAt).toHaveLength(3);
    expect(reservedAt[1]).toBeGreaterThanOrEqual(2_500);
  });
});
