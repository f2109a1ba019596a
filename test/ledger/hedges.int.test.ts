import { describe, expect, it } from 'vitest';
import type { CheckpointInput, DispatchedSubtask, Hedge } from '../../lib/contract';
import { reconcile, synthesisInputs } from '../../lib/domain';
import { BudgetExhausted, ClaimHeld, HandedOver, HedgeLost, toRunResource, toSubtaskViews, type Claim } from '../../lib/ledger';
import { documentClient, uniqueName } from '../support/aws';
import { dispatched, ledgerFor, ledgerTestTable, okOutcome, settle, startRun } from './support';

const suite = ledgerTestTable('ledger-hedges', { dailyAllowance: { modelCalls: 100_000, costLimit: 10_000_000 } });
const { clock } = suite;

const DEADLINE = '2040-06-01T12:01:00.000Z';
const LEASE_MS = 30_000;

/** Subtask A (Q1 2025, 4 calls at 7 per call) with a hedge, dispatched alone. */
const hedgedRun = async (hedge: Hedge, budget = { modelCalls: 4, estimatedCostPerCall: 7 }) => {
  const tenantId = uniqueName('tenant');
  const a: DispatchedSubtask = dispatched('A', '2025-01-01', '2025-04-01', { hedge, budget, deadline: DEADLINE });
  const runId = await startRun(suite.ledger, tenantId, [a]);
  const ref = { tenantId, runId };
  const claim = (subtaskId: string, workerId = `w-${subtaskId}`) => suite.ledger.claimSubtask({ ...ref, subtaskId, workerId, leaseMs: LEASE_MS });
  const subtask = async (subtaskId: string) => (await suite.ledger.getSubtask({ ...ref, subtaskId }))!;
  return { ...ref, claim, subtask };
};

const names = (errors: unknown[]) =>
  errors.map((error) => (error instanceof BudgetExhausted ? `${error.name}:${error.limit}:${error.counter}` : (error as Error).name));

describe('starting a hedge', () => {
  it('writes the copies once, keeps them out of the manifest, and a retry returns the same copies', async () => {
    const run = await hedgedRun({ afterSeconds: 10, mode: 'subdivide', copies: 3 });
    clock.advance(10_000);
    const first = await suite.ledger.startHedge({ ...run, subtaskId: 'A' });
    expect(first.written).toBe(true);
    // Q1 2025 is 90 days: 30 each, cut at whole days
    expect(first.copies.map((c) => [c.id, c.assigned, c.deadline])).toEqual([
      ['A.h1', { from: '2025-01-01', toExclusive: '2025-01-31' }, DEADLINE],
      ['A.h2', { from: '2025-01-31', toExclusive: '2025-03-02' }, DEADLINE],
      ['A.h3', { from: '2025-03-02', toExclusive: '2025-04-01' }, DEADLINE],
    ]);
    const again = await suite.ledger.startHedge({ ...run, subtaskId: 'A' });
    expect(again).toEqual({ written: false, copies: first.copies, state: 'pending' });

    const { manifest, unfinished } = await suite.ledger.readManifest(run.tenantId, run.runId);
    expect(manifest.subtasks.map((s) => s.id)).toEqual(['A']);
    expect(unfinished).toEqual(['A']);
    const record = await suite.ledger.getRun(run.tenantId, run.runId);
    expect(record?.copies?.map((c) => [c.subtaskId, c.hedgeOf, c.state, c.callsLimit])).toEqual([
      ['A.h1', 'A', 'pending', 0],
      ['A.h2', 'A', 'pending', 0],
      ['A.h3', 'A', 'pending', 0],
    ]);
  });

  it('counts only the hedged subtask in the run progress, not its copies', async () => {
    const run = await hedgedRun({ afterSeconds: 10, mode: 'subdivide', copies: 3 });
    await suite.ledger.startHedge({ ...run, subtaskId: 'A' });
    const listed = async (status: 'running' | 'succeeded') => (await suite.ledger.listRuns({ tenantId: run.tenantId, status, limit: 5 })).runs[0]?.progress;
    expect(await listed('running')).toMatchObject({ dispatched: 1, terminal: 0, byState: { pending: 1 } });
    const record = await suite.ledger.getRun(run.tenantId, run.runId);
    expect(toRunResource(record!).progress).toMatchObject({ dispatched: 1, terminal: 0 });
  });

  it('a page of subtasks shows the copies inside the subtask they race, never as subtasks of their own', async () => {
    const run = await hedgedRun({ afterSeconds: 10, mode: 'subdivide', copies: 3 });
    clock.advance(10_000);
    await suite.ledger.startHedge({ ...run, subtaskId: 'A' });
    const read = await suite.ledger.subtaskPage({ ...run, limit: 1 });
    if (read.kind !== 'page') throw new Error(`expected a page, got ${read.kind}`);
    // The three copies sort after A (`SUB#A.h1`…) but are not subtasks: one subtask, no next page.
    expect(read.subtasks.map((item) => item.subtaskId)).toEqual(['A']);
    expect(read.more).toBe(false);
    const [view] = toSubtaskViews(read.subtasks, read.late, read.copies);
    expect(view?.hedgeCopies?.map((copy) => copy.id)).toEqual(['A.h1', 'A.h2', 'A.h3']);
    // The page shows A as the whole run resource does.
    const record = await suite.ledger.getRun(run.tenantId, run.runId);
    expect(view).toEqual(toRunResource(record!).subtasks[0]);
  });

  it('concurrent starts write one set of copies', async () => {
    const run = await hedgedRun({ afterSeconds: 10, mode: 'replicate', copies: 3 });
    const { values, errors } = await settle(Array.from({ length: 6 }, () => suite.ledger.startHedge({ ...run, subtaskId: 'A' })));
    expect(errors).toEqual([]);
    expect(values.filter((v) => v.written)).toHaveLength(1);
    expect(new Set(values.map((v) => v.copies.map((c) => c.id).join()))).toEqual(new Set(['A.h1,A.h2']));
  });

  it('starts nothing once the subtask ended or its deadline passed', async () => {
    const ended = await hedgedRun({ afterSeconds: 10, mode: 'replicate', copies: 2 });
    const claim = await ended.claim('A');
    await suite.ledger.recordOutcome(claim, okOutcome('A', '2025-01-01', '2025-03-31', 10));
    expect(await suite.ledger.startHedge({ ...ended, subtaskId: 'A' })).toEqual({ written: false, copies: [], state: 'ok' });

    const late = await hedgedRun({ afterSeconds: 10, mode: 'replicate', copies: 2 });
    clock.set(DEADLINE);
    expect(await suite.ledger.startHedge({ ...late, subtaskId: 'A' })).toEqual({ written: false, copies: [], state: 'pending' });
  });
});

describe('replicate: the first ok wins, the loser is refused and its spend stays charged', () => {
  it('the replica wins; the original is refused at its next reservation and its outcome', async () => {
    const run = await hedgedRun({ afterSeconds: 10, mode: 'replicate', copies: 2 });
    const original = await run.claim('A');
    await suite.ledger.reserveBudget(original);
    await suite.ledger.registerWaiter({ ...run, subtaskId: 'A', taskToken: 'token-of-A' });
    clock.advance(10_000);
    await suite.ledger.startHedge({ ...run, subtaskId: 'A' });
    const replica = await run.claim('A.h1');
    await suite.ledger.reserveBudget(replica);
    await suite.ledger.reserveBudget(replica);

    const won = await suite.ledger.recordOutcome(replica, okOutcome('A.h1', '2025-01-01', '2025-03-31', 42));
    expect(won).toEqual({ taskToken: 'token-of-A', duplicate: false });
    const a = await run.subtask('A');
    expect([a.state, a.hedgeWinner, a.outcome?.observed]).toEqual([
      'ok',
      { by: 'replica', id: 'A.h1' },
      { minDate: '2025-01-01', maxDate: '2025-03-31', recordCount: 42 },
    ]);

    await expect(suite.ledger.reserveBudget(original)).rejects.toMatchObject({ name: 'HedgeLost', state: 'ok', winner: 'A.h1' });
    await expect(suite.ledger.recordOutcome(original, okOutcome('A', '2025-01-01', '2025-03-31', 42))).rejects.toBeInstanceOf(HedgeLost);
    // three reservations were made (one by the loser): all stay charged on A's one allowance
    const after = await run.subtask('A');
    expect([after.callsLeft, after.costLeft]).toEqual([1, 7]);
    const record = await suite.ledger.getRun(run.tenantId, run.runId);
    expect(record && record.run.callsLimit - record.run.callsLeft).toBe(3);
    // nothing was kept as late evidence for the loser
    expect(record?.late).toEqual([]);
    // the run resource shows the race: the replica won, A's usage holds every copy's spend
    const [view] = toRunResource(record!).subtasks;
    expect(view).toMatchObject({
      id: 'A',
      state: 'ok',
      usage: { modelCalls: 3, estimatedCost: 21 },
      hedge: { afterSeconds: 10, mode: 'replicate', copies: 2 },
      hedgeWinner: { by: 'replica', id: 'A.h1' },
      hedgeCopies: [{ id: 'A.h1', assigned: { from: '2025-01-01', toExclusive: '2025-04-01' }, state: 'ok' }],
    });
  });

  it('the original wins; the replica is refused at its next reservation and its outcome', async () => {
    const run = await hedgedRun({ afterSeconds: 10, mode: 'replicate', copies: 2 });
    const original = await run.claim('A');
    await suite.ledger.startHedge({ ...run, subtaskId: 'A' });
    const replica = await run.claim('A.h1');
    await suite.ledger.reserveBudget(replica);
    await suite.ledger.recordOutcome(original, okOutcome('A', '2025-01-01', '2025-03-31', 42));
    await expect(suite.ledger.reserveBudget(replica)).rejects.toMatchObject({ name: 'HedgeLost', winner: 'A' });
    await expect(suite.ledger.recordOutcome(replica, okOutcome('A.h1', '2025-01-01', '2025-03-31', 42))).rejects.toMatchObject({
      name: 'HedgeLost',
      winner: 'A',
    });
    const a = await run.subtask('A');
    expect([a.callsLeft, a.hedgeWinner]).toEqual([3, undefined]);
  });

  it('a non-ok replica covers nothing: the original can still win', async () => {
    const run = await hedgedRun({ afterSeconds: 10, mode: 'replicate', copies: 2 });
    const original = await run.claim('A');
    await suite.ledger.startHedge({ ...run, subtaskId: 'A' });
    const replica = await run.claim('A.h1');
    expect(await suite.ledger.recordOutcome(replica, { subtaskId: 'A.h1', state: 'invalid', observed: null, reason: 'bad output' })).toEqual({
      taskToken: undefined,
      duplicate: false,
    });
    expect((await run.subtask('A')).state).toBe('running');
    await suite.ledger.recordOutcome(original, okOutcome('A', '2025-01-01', '2025-03-31', 42));
    expect((await run.subtask('A')).state).toBe('ok');
  });
});

describe('one allowance under concurrent and duplicate deliveries', () => {
  it('replicate, 3 copies: 90 reservations at once (duplicates of each claim included) spend exactly the 4 calls of A', async () => {
    const run = await hedgedRun({ afterSeconds: 10, mode: 'replicate', copies: 3 });
    await suite.ledger.startHedge({ ...run, subtaskId: 'A' });
    // duplicate deliveries of a copy: only one claim holds while its lease is live
    const deliveries = await settle(['A.h1', 'A.h1', 'A.h1'].map((id, i) => run.claim(id, `w-${i}`)));
    expect(deliveries.values).toHaveLength(1);
    expect(deliveries.errors.every((e) => e instanceof ClaimHeld)).toBe(true);
    const claims: Claim[] = [await run.claim('A'), deliveries.values[0]!, await run.claim('A.h2')];
    const { values, errors } = await settle(Array.from({ length: 90 }, (_, i) => suite.ledger.reserveBudget(claims[i % 3]!)));
    expect(values).toHaveLength(4);
    expect(new Set(names(errors))).toEqual(new Set(['BudgetExhausted:subtask:calls']));
    const a = await run.subtask('A');
    expect([a.callsLeft, a.costLeft]).toEqual([0, 0]);
    const record = await suite.ledger.getRun(run.tenantId, run.runId);
    expect([record!.run.callsLimit - record!.run.callsLeft, record!.run.costLimit - record!.run.costLeft]).toEqual([4, 28]);
    expect(await suite.ledger.tenantUsage(run.tenantId)).toMatchObject({ modelCalls: 4, estimatedCost: 28 });
  });

  it('subdivide, 4 pieces: 80 reservations at once spend exactly the 4 calls of A', async () => {
    const run = await hedgedRun({ afterSeconds: 10, mode: 'subdivide', copies: 4 }, { modelCalls: 4, estimatedCostPerCall: 5 });
    const { copies } = await suite.ledger.startHedge({ ...run, subtaskId: 'A' });
    const claims = await Promise.all(copies.map((c) => run.claim(c.id)));
    const { values } = await settle(Array.from({ length: 80 }, (_, i) => suite.ledger.reserveBudget(claims[i % 4]!)));
    expect(values).toHaveLength(4);
    expect((await run.subtask('A')).costLeft).toBe(0);
  });
});

describe('subdivide: every piece ok is the cover', () => {
  it('pieces finishing at once end A exactly once, won by every piece; a duplicate outcome is answered, the original refused', async () => {
    const run = await hedgedRun({ afterSeconds: 10, mode: 'subdivide', copies: 3 });
    const original = await run.claim('A');
    await suite.ledger.registerWaiter({ ...run, subtaskId: 'A', taskToken: 'token-of-A' });
    const { copies } = await suite.ledger.startHedge({ ...run, subtaskId: 'A' });
    const claims = await Promise.all(copies.map((c) => run.claim(c.id)));
    const outcomes = claims.map((claim, i) => {
      const scope = copies[i]!.assigned as { from: string; toExclusive: string };
      const last = new Date(Date.parse(scope.toExclusive) - 86_400_000).toISOString().slice(0, 10);
      return suite.ledger.recordOutcome(claim, okOutcome(claim.subtaskId, scope.from, last, 10 + i));
    });
    const { values, errors } = await settle(outcomes);
    expect(errors).toEqual([]);
    // exactly one piece completed the cover and got A's waiter token to answer
    expect(values.filter((v) => v.taskToken === 'token-of-A')).toHaveLength(1);
    const a = await run.subtask('A');
    expect(a.state).toBe('ok');
    expect(a.hedgeWinner).toEqual({ by: 'pieces', ids: ['A.h1', 'A.h2', 'A.h3'] });
    expect([...(a.piecesOk ?? [])].sort()).toEqual(['A.h1', 'A.h2', 'A.h3']);
    const [view] = toRunResource((await suite.ledger.getRun(run.tenantId, run.runId))!).subtasks;
    expect(view?.hedgeCopies).toEqual(copies.map((c) => ({ id: c.id, assigned: c.assigned, state: 'ok' })));
    expect(view?.hedgeWinner).toEqual({ by: 'pieces', ids: ['A.h1', 'A.h2', 'A.h3'] });

    const again = await suite.ledger.recordOutcome(claims[0]!, okOutcome('A.h1', '2025-01-01', '2025-01-30', 10));
    expect(again.duplicate).toBe(true);
    await expect(suite.ledger.recordOutcome(original, okOutcome('A', '2025-01-01', '2025-03-31', 42))).rejects.toMatchObject({
      name: 'HedgeLost',
      winner: 'pieces A.h1, A.h2, A.h3',
    });
  });

  it('a piece that is not ok leaves A running; the original wins and the last piece is refused', async () => {
    const run = await hedgedRun({ afterSeconds: 10, mode: 'subdivide', copies: 2 });
    const original = await run.claim('A');
    const { copies } = await suite.ledger.startHedge({ ...run, subtaskId: 'A' });
    const [first, second] = await Promise.all(copies.map((c) => run.claim(c.id)));
    await suite.ledger.recordOutcome(first!, { subtaskId: 'A.h1', state: 'empty', observed: null });
    expect((await run.subtask('A')).state).toBe('running');
    await suite.ledger.recordOutcome(original, okOutcome('A', '2025-01-01', '2025-03-31', 42));
    await expect(suite.ledger.recordOutcome(second!, okOutcome('A.h2', '2025-02-15', '2025-03-31', 5))).rejects.toMatchObject({
      name: 'HedgeLost',
      winner: 'A',
    });
  });

  it('a copy past the deadline is refused with DeadlinePassed, like the original', async () => {
    const run = await hedgedRun({ afterSeconds: 10, mode: 'replicate', copies: 2 });
    await suite.ledger.startHedge({ ...run, subtaskId: 'A' });
    const replica = await run.claim('A.h1');
    clock.set(DEADLINE);
    await expect(suite.ledger.reserveBudget(replica)).rejects.toMatchObject({ name: 'DeadlinePassed' });
    await expect(suite.ledger.recordOutcome(replica, okOutcome('A.h1', '2025-01-01', '2025-03-31', 1))).rejects.toMatchObject({ name: 'DeadlinePassed' });
  });
});

describe('readManifest, for reconcile', () => {
  /** Each piece reads its whole scope: observed from its first day to its last. */
  const wholePiece = (copy: DispatchedSubtask, recordCount: number) => {
    const scope = copy.assigned as { from: string; toExclusive: string };
    const last = new Date(Date.parse(scope.toExclusive) - 86_400_000).toISOString().slice(0, 10);
    return okOutcome(copy.id, scope.from, last, recordCount);
  };

  it('returns, for a subtask won by its pieces, the winning pieces’ outcomes; the copies stay out of the manifest', async () => {
    const run = await hedgedRun({ afterSeconds: 10, mode: 'subdivide', copies: 2 });
    await run.claim('A');
    const { copies } = await suite.ledger.startHedge({ ...run, subtaskId: 'A' });
    // Q1 2025 in whole days: 1 Jan to 14 Feb (45 days) and 15 Feb to 31 Mar (45 days).
    expect(copies.map((c) => [c.id, c.assigned])).toEqual([
      ['A.h1', { from: '2025-01-01', toExclusive: '2025-02-15' }],
      ['A.h2', { from: '2025-02-15', toExclusive: '2025-04-01' }],
    ]);
    for (const [i, copy] of copies.entries()) await suite.ledger.recordOutcome(await run.claim(copy.id), wholePiece(copy, 10 + i));

    const read = await suite.ledger.readManifest(run.tenantId, run.runId);
    expect(read.manifest.subtasks.map((s) => s.id)).toEqual(['A']);
    expect(read.outcomes.map((o) => [o.subtaskId, o.state])).toEqual([['A', 'ok']]);
    expect([...read.pieces.keys()]).toEqual(['A']);
    expect(read.pieces.get('A')?.map((o) => [o.subtaskId, o.state, o.observed])).toEqual([
      ['A.h1', 'ok', { minDate: '2025-01-01', maxDate: '2025-02-14', recordCount: 10 }],
      ['A.h2', 'ok', { minDate: '2025-02-15', maxDate: '2025-03-31', recordCount: 11 }],
    ]);
  });

  it('returns no pieces when a replica won, or when the original won after a piece failed', async () => {
    const replicated = await hedgedRun({ afterSeconds: 10, mode: 'replicate', copies: 2 });
    await suite.ledger.startHedge({ ...replicated, subtaskId: 'A' });
    await suite.ledger.recordOutcome(await replicated.claim('A.h1'), okOutcome('A.h1', '2025-01-01', '2025-03-31', 42));
    const byReplica = await suite.ledger.readManifest(replicated.tenantId, replicated.runId);
    expect(byReplica.pieces.size).toBe(0);
    // The replica's outcome is A's own: reconcile reads it as A's.
    expect(byReplica.outcomes.map((o) => [o.subtaskId, o.state, o.observed])).toEqual([
      ['A', 'ok', { minDate: '2025-01-01', maxDate: '2025-03-31', recordCount: 42 }],
    ]);

    const subdivided = await hedgedRun({ afterSeconds: 10, mode: 'subdivide', copies: 2 });
    const original = await subdivided.claim('A');
    const { copies } = await suite.ledger.startHedge({ ...subdivided, subtaskId: 'A' });
    await suite.ledger.recordOutcome(await subdivided.claim(copies[0]!.id), wholePiece(copies[0]!, 10));
    await suite.ledger.recordOutcome(await subdivided.claim(copies[1]!.id), { subtaskId: copies[1]!.id, state: 'empty', observed: null });
    await suite.ledger.recordOutcome(original, okOutcome('A', '2025-01-01', '2025-03-31', 40));
    const byOriginal = await suite.ledger.readManifest(subdivided.tenantId, subdivided.runId);
    expect(byOriginal.pieces.size).toBe(0);
    expect(byOriginal.outcomes.map((o) => [o.subtaskId, o.state])).toEqual([['A', 'ok']]);
  });
});

describe('subdivide with handover: the original hands over at its checkpoint, the pieces read only the rest', () => {
  /** A's checkpoint: the tools answered [from, to) of Q1 (one record a day), with partial findings over it unless `partial` is false. */
  const checkpointOf = (claim: Claim, sequence: number, to: string, lastDay: string, days: number, partial = true): CheckpointInput => {
    const covered = [{ from: '2025-01-01', toExclusive: to }];
    const observed = { minDate: '2025-01-01', maxDate: lastDay, recordCount: days };
    return {
      generation: claim.generation,
      sequence,
      writtenAt: '2040-06-01T12:00:05.000Z',
      covered,
      observed,
      usage: { modelCalls: 1, estimatedCost: 7 },
      ...(partial ? { partial: { covered, observed, findings: { totalDeductible: days * 100 } } } : {}),
    };
  };
  const PREFIX = [{ from: '2025-01-01', toExclusive: '2025-01-31' }];

  it('tells the original when it may hand over (its handover window), until the race starts; a replicate hedge or a piece has none', async () => {
    const run = await hedgedRun({ afterSeconds: 10, mode: 'subdivide', copies: 2 });
    // Dispatched at T0, 12:00:00; the hedge is due 10 s later, before the 12:01:00 deadline.
    const original = await run.claim('A');
    expect(original.handoverDueAt).toBe('2040-06-01T12:00:10.000Z');
    const { copies } = await suite.ledger.startHedge({ ...run, subtaskId: 'A' });
    expect((await run.claim(copies[0]!.id)).handoverDueAt).toBeUndefined();
    // No checkpoint, so nothing was handed over: a redelivery after the lease claims A again, with the race already started.
    clock.advance(LEASE_MS);
    expect((await run.claim('A', 'w-again')).handoverDueAt).toBeUndefined();
    const replicated = await hedgedRun({ afterSeconds: 10, mode: 'replicate', copies: 2 });
    expect((await replicated.claim('A')).handoverDueAt).toBeUndefined();
  });

  it('cuts the pieces from the rest, freezes the prefix, refuses the original, shares one allowance, and reconcile proves prefix + pieces', async () => {
    const run = await hedgedRun({ afterSeconds: 10, mode: 'subdivide', copies: 2 });
    const original = await run.claim('A');
    await suite.ledger.reserveBudget(original);
    // 30 days read (1..30 Jan) with findings over them.
    await suite.ledger.writeCheckpoint(original, checkpointOf(original, 1, '2025-01-31', '2025-01-30', 30));
    clock.advance(10_000);

    const started = await suite.ledger.startHedge({ ...run, subtaskId: 'A' });
    expect(started.written).toBe(true);
    // The rest, 31 Jan..31 Mar, is 60 days: two pieces of 30 whole days. Prefix + pieces = Q1.
    expect(started.copies.map((c) => [c.id, c.assigned, c.lineage])).toEqual([
      ['A.h1', { from: '2025-01-31', toExclusive: '2025-03-02' }, { kind: 'hedge', of: 'A', mode: 'subdivide', copy: 1, prefix: PREFIX }],
      ['A.h2', { from: '2025-03-02', toExclusive: '2025-04-01' }, { kind: 'hedge', of: 'A', mode: 'subdivide', copy: 2, prefix: PREFIX }],
    ]);
    const a = await run.subtask('A');
    expect(a.handedOverAt).toBe('2040-06-01T12:00:10.000Z');
    const [view] = toRunResource((await suite.ledger.getRun(run.tenantId, run.runId))!).subtasks;
    expect([view?.handedOverAt, view?.checkpoint?.partial?.covered]).toEqual(['2040-06-01T12:00:10.000Z', PREFIX]);

    // The original is stopped at its checkpoint: nothing it writes lands, and no redelivery claims it.
    await expect(suite.ledger.writeCheckpoint(original, checkpointOf(original, 2, '2025-02-10', '2025-02-09', 40))).resolves.toEqual({
      written: false,
      handedOver: true,
    });
    await expect(suite.ledger.reserveBudget(original)).rejects.toBeInstanceOf(HandedOver);
    await expect(suite.ledger.recordOutcome(original, okOutcome('A', '2025-01-01', '2025-03-31', 90))).rejects.toBeInstanceOf(HandedOver);
    clock.advance(LEASE_MS);
    await expect(run.claim('A', 'w-redelivered')).rejects.toBeInstanceOf(HandedOver);
    expect((await run.subtask('A')).checkpoint?.sequence).toBe(1);
    // A retried start returns the same pieces, cut from the frozen checkpoint.
    expect(await suite.ledger.startHedge({ ...run, subtaskId: 'A' })).toEqual({ written: false, copies: started.copies, state: 'running' });

    // One allowance: the original spent 1 of A's 4 calls; the pieces spend the other 3, no more.
    const [h1, h2] = await Promise.all(started.copies.map((c) => run.claim(c.id)));
    await suite.ledger.reserveBudget(h1!);
    await suite.ledger.reserveBudget(h1!);
    await suite.ledger.reserveBudget(h2!);
    await expect(suite.ledger.reserveBudget(h2!)).rejects.toMatchObject({ name: 'BudgetExhausted', limit: 'subtask', counter: 'calls' });
    await suite.ledger.recordOutcome(h1!, okOutcome('A.h1', '2025-01-31', '2025-03-01', 30));
    await suite.ledger.recordOutcome(h2!, okOutcome('A.h2', '2025-03-02', '2025-03-31', 30));
    const won = await run.subtask('A');
    expect([won.state, won.hedgeWinner, won.callsLeft]).toEqual(['ok', { by: 'pieces', ids: ['A.h1', 'A.h2'] }, 0]);
    await expect(suite.ledger.recordOutcome(original, okOutcome('A', '2025-01-01', '2025-03-31', 90))).rejects.toBeInstanceOf(HedgeLost);

    // Reconcile: A's outcome carries the frozen checkpoint; prefix (30 days) + pieces (30 + 30) tile Q1.
    const read = await suite.ledger.readManifest(run.tenantId, run.runId);
    const [outcome] = read.outcomes;
    expect([outcome?.state, outcome?.checkpoint?.partial?.covered, outcome?.usage]).toEqual(['ok', PREFIX, { modelCalls: 4, estimatedCost: 28 }]);
    const reconciliation = reconcile(read.manifest, read.outcomes, read.pieces);
    const line = reconciliation.resumed.get('A');
    expect([line?.handedOver, line?.problems, line?.prefixes.map((p) => p.prefix)]).toEqual([true, [], [PREFIX]]);
    expect(reconciliation.problems.filter((p) => (p.subtaskIds ?? []).includes('A') && p.code !== 'assignment_gap')).toEqual([]);
    // The answer reads the prefix's findings once and each piece's once.
    expect(synthesisInputs(reconciliation).map((i) => [i.subtask.id, i.subtask.assigned, i.outcome.findings])).toEqual([
      ['A', PREFIX[0], { totalDeductible: 3000 }],
      ['A.h1', { from: '2025-01-31', toExclusive: '2025-03-02' }, { totalDeductible: 3880 }],
      ['A.h2', { from: '2025-03-02', toExclusive: '2025-04-01' }, { totalDeductible: 3880 }],
    ]);
  });

  it('a checkpoint without partial findings hands nothing over: the pieces tile the whole scope and the original races on', async () => {
    const run = await hedgedRun({ afterSeconds: 10, mode: 'subdivide', copies: 2 });
    const original = await run.claim('A');
    await suite.ledger.writeCheckpoint(original, checkpointOf(original, 1, '2025-01-31', '2025-01-30', 30, false));
    const { copies } = await suite.ledger.startHedge({ ...run, subtaskId: 'A' });
    expect(copies.map((c) => [c.assigned, c.lineage])).toEqual([
      [
        { from: '2025-01-01', toExclusive: '2025-02-15' },
        { kind: 'hedge', of: 'A', mode: 'subdivide', copy: 1 },
      ],
      [
        { from: '2025-02-15', toExclusive: '2025-04-01' },
        { kind: 'hedge', of: 'A', mode: 'subdivide', copy: 2 },
      ],
    ]);
    expect((await run.subtask('A')).handedOverAt).toBeUndefined();
    await expect(suite.ledger.writeCheckpoint(original, checkpointOf(original, 2, '2025-02-10', '2025-02-09', 40, false))).resolves.toEqual({ written: true });
    // The original may still win the race over the whole scope.
    await suite.ledger.recordOutcome(original, okOutcome('A', '2025-01-01', '2025-03-31', 90));
    expect((await run.subtask('A')).state).toBe('ok');
  });

  it('replicate never hands over, whatever the checkpoint says', async () => {
    const run = await hedgedRun({ afterSeconds: 10, mode: 'replicate', copies: 2 });
    const original = await run.claim('A');
    await suite.ledger.writeCheckpoint(original, checkpointOf(original, 1, '2025-01-31', '2025-01-30', 30));
    const { copies } = await suite.ledger.startHedge({ ...run, subtaskId: 'A' });
    expect(copies.map((c) => [c.assigned, c.lineage])).toEqual([
      [
        { from: '2025-01-01', toExclusive: '2025-04-01' },
        { kind: 'hedge', of: 'A', mode: 'replicate', copy: 1 },
      ],
    ]);
    expect((await run.subtask('A')).handedOverAt).toBeUndefined();
    await expect(suite.ledger.reserveBudget(original)).resolves.toMatchObject({ modelCalls: 1 });
  });

  /**
   * A ledger on the suite's table that runs `before` once, just before its first
   * TransactWriteItems: between startHedge's read and its write.
   */
  const interleaved = (before: () => Promise<unknown>) => {
    const client = documentClient();
    let pending = true;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (pending && /TransactWrite/.test(context.commandName ?? '')) {
          pending = false;
          await before();
        }
        return next(args);
      },
      { step: 'initialize', name: 'interleave-before-transaction' },
    );
    // The same calls as the suite's own startHedge, which records them for test/iam.
    return ledgerFor({ client, tableName: suite.tableName, clock });
  };

  it('a checkpoint written between the read and the write moves the handover to it: the prefix is what is stored', async () => {
    const run = await hedgedRun({ afterSeconds: 10, mode: 'subdivide', copies: 2 });
    const original = await run.claim('A');
    // 10 days read (1..10 Jan); then, while the hedge starts, 30 days (1..30 Jan).
    await suite.ledger.writeCheckpoint(original, checkpointOf(original, 1, '2025-01-11', '2025-01-10', 10));
    const ledger = interleaved(() => suite.ledger.writeCheckpoint(original, checkpointOf(original, 2, '2025-01-31', '2025-01-30', 30)));
    const { copies, written } = await ledger.startHedge({ ...run, subtaskId: 'A' });
    // Cut from sequence 2, not the 80-day rest of sequence 1 (11 Jan..20 Feb, 20 Feb..1 Apr).
    expect([written, copies.map((c) => c.assigned)]).toEqual([
      true,
      [
        { from: '2025-01-31', toExclusive: '2025-03-02' },
        { from: '2025-03-02', toExclusive: '2025-04-01' },
      ],
    ]);
    expect((await run.subtask('A')).checkpoint?.sequence).toBe(2);
  });

  it("a stale generation's handover never lands: a claim between the read and the write binds it to the new generation", async () => {
    const run = await hedgedRun({ afterSeconds: 10, mode: 'subdivide', copies: 2 });
    const stale = await run.claim('A', 'w-old');
    await suite.ledger.writeCheckpoint(stale, checkpointOf(stale, 1, '2025-01-31', '2025-01-30', 30));
    clock.advance(LEASE_MS);
    let current: Claim | undefined;
    const ledger = interleaved(async () => {
      current = await run.claim('A', 'w-new');
    });
    const { written } = await ledger.startHedge({ ...run, subtaskId: 'A' });
    expect(written).toBe(true);
    const a = await run.subtask('A');
    expect([a.generation, a.handedOverAt !== undefined, a.checkpoint?.generation]).toEqual([2, true, 1]);
    // The stale generation is refused as stale; the current one is told it handed over.
    await expect(suite.ledger.writeCheckpoint(stale, checkpointOf(stale, 2, '2025-02-10', '2025-02-09', 40))).rejects.toMatchObject({
      name: 'LeaseLost',
      reason: 'superseded',
    });
    await expect(suite.ledger.writeCheckpoint(current!, checkpointOf(current!, 2, '2025-02-10', '2025-02-09', 40))).resolves.toEqual({
      written: false,
      handedOver: true,
    });
    await expect(suite.ledger.reserveBudget(current!)).rejects.toBeInstanceOf(HandedOver);
    expect((await run.subtask('A')).checkpoint?.sequence).toBe(1);
  });

  it('a handed-over subtask whose pieces do not finish is sealed with its prefix: the timed-out outcome carries it for the retry', async () => {
    const run = await hedgedRun({ afterSeconds: 10, mode: 'subdivide', copies: 2 });
    const original = await run.claim('A');
    await suite.ledger.writeCheckpoint(original, checkpointOf(original, 1, '2025-01-31', '2025-01-30', 30));
    await suite.ledger.startHedge({ ...run, subtaskId: 'A' });
    clock.set(DEADLINE);
    await suite.ledger.sealTimedOut({ ...run, subtaskId: 'A' });
    const read = await suite.ledger.readManifest(run.tenantId, run.runId);
    expect(read.outcomes.map((o) => [o.state, o.checkpoint?.partial?.covered])).toEqual([['timed_out', PREFIX]]);
  });
});
