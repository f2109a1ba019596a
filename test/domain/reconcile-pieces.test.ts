import { describe, expect, it } from 'vitest';
import type { DispatchedSubtask } from '../../lib/contract';
import { buildCoverage, planNextRound, reconcile, resolveGaps, synthesisInputs } from '../../lib/domain';
import { manifestOf, okIds, outcome, withRound } from './fixtures';

/**
 * A subtask won by its `subdivide` hedge's pieces has no observation of its own (the ledger ends
 * it `ok` when the last piece completes the cover): reconcile judges it by its pieces. Four
 * accounts cut in two: CRM.h1 is assigned acc-1, acc-2 and CRM.h2 acc-3, acc-4 (near-equal id
 * chunks, in order).
 */
const IDS = ['acc-1', 'acc-2', 'acc-3', 'acc-4'];
const crm: DispatchedSubtask = {
  id: 'CRM',
  worker: 'scout-crm',
  round: 1,
  questionIds: [],
  required: true,
  justification: 'the notes of every key account',
  deadlineSeconds: 25,
  budget: { modelCalls: 4, estimatedCostPerCall: 7 },
  assigned: { ids: IDS },
  hedge: { afterSeconds: 12, mode: 'subdivide', copies: 2 },
} as DispatchedSubtask;
const manifest = manifestOf({ universe: { dimension: 'ids', ids: IDS }, subtasks: [crm] });
/** The hedged subtask's own outcome as the ledger reads it after the pieces won: ok, nothing observed. */
const wonByPieces = outcome({ subtaskId: 'CRM', state: 'ok', observed: null, sourcesReached: 1 });

describe('reconcile, a subtask won by its pieces', () => {
  it("is covered by its pieces' observations when they tile its scope and each read its own piece", () => {
    const pieces = new Map([['CRM', [okIds('CRM.h2', ['acc-3', 'acc-4']), okIds('CRM.h1', ['acc-1', 'acc-2'])]]]);
    const result = reconcile(manifest, [wonByPieces], pieces);
    expect(result.problems).toEqual([]);
    expect(result.observedGaps).toEqual([]);
  });

  it('without its pieces, the same outcome is an ok with nothing observed (what reconcile saw before)', () => {
    expect(reconcile(manifest, [wonByPieces]).problems.map((p) => [p.code, p.subtaskIds])).toEqual([['inconsistent_observation', ['CRM']]]);
  });

  it("a gap a piece left is that piece's gap, not hidden in a merged range", () => {
    const pieces = new Map([['CRM', [okIds('CRM.h1', ['acc-1', 'acc-2']), okIds('CRM.h2', ['acc-3'])]]]);
    const result = reconcile(manifest, [wonByPieces], pieces);
    expect(result.observedGaps).toEqual([{ subtaskId: 'CRM.h2', worker: 'scout-crm', number: 1, code: 'ids_missing', region: { ids: ['acc-4'] } }]);
    expect(result.problems.map((p) => [p.code, p.path, p.subtaskIds])).toEqual([['ids_missing', 'pieces.CRM.h2.observed', ['CRM.h2']]]);
  });

  it('pieces that do not tile the scope are an assignment gap of the subtask, found by the round-1 tiling check', () => {
    const pieces = new Map([['CRM', [okIds('CRM.h1', ['acc-1', 'acc-2'])]]]);
    const gaps = reconcile(manifest, [wonByPieces], pieces).problems.filter((p) => p.code === 'assignment_gap');
    expect(gaps).toHaveLength(1);
    expect(gaps[0]).toMatchObject({ ids: ['acc-3', 'acc-4'] });
    expect(gaps[0]?.subtaskIds?.[0]).toBe('CRM');
  });

  it('an outcome that is no piece of the subtask is unexpected and covers nothing', () => {
    const pieces = new Map([['CRM', [okIds('CRM.h1', ['acc-1', 'acc-2']), okIds('CRM.h2', ['acc-3', 'acc-4']), okIds('CRM.h3', ['acc-4'])]]]);
    const codes = reconcile(manifest, [wonByPieces], pieces).problems.map((p) => [p.code, p.subtaskIds]);
    expect(codes).toEqual([['unexpected_outcome', ['CRM.h3']]]);
  });

  it("synthesis reads the winning pieces in the subtask's place, each with its own assignment", () => {
    const pieces = new Map([['CRM', [okIds('CRM.h1', ['acc-1', 'acc-2']), okIds('CRM.h2', ['acc-3', 'acc-4'])]]]);
    const inputs = synthesisInputs(reconcile(manifest, [wonByPieces], pieces));
    expect(inputs.map((i) => [i.subtask.id, i.subtask.assigned, i.outcome.subtaskId])).toEqual([
      ['CRM.h1', { ids: ['acc-1', 'acc-2'] }, 'CRM.h1'],
      ['CRM.h2', { ids: ['acc-3', 'acc-4'] }, 'CRM.h2'],
    ]);
  });

  it("a piece's gap is re-checked as <piece>.g<n>, for exactly the gap, and its re-check settles it", () => {
    const pieces = new Map([['CRM', [okIds('CRM.h1', ['acc-1', 'acc-2']), okIds('CRM.h2', ['acc-3'])]]]);
    const round1 = reconcile(manifest, [wonByPieces], pieces);
    const next = planNextRound(manifest, [wonByPieces], round1);
    expect(next.map((s) => [s.id, s.round, s.assigned, s.lineage])).toEqual([
      ['CRM.h2.g1', 2, { ids: ['acc-4'] }, { kind: 'recheck', of: 'CRM.h2', gap: { ids: ['acc-4'] } }],
    ]);
    const round2 = withRound(manifest, next);
    const settled = resolveGaps(reconcile(round2, [wonByPieces, okIds('CRM.h2.g1', ['acc-4'])], pieces));
    expect(settled.map((g) => [g.coverage.subtaskId, g.coverage.status, g.coverage.recheckSubtaskId])).toEqual([['CRM.h2', 'data_found', 'CRM.h2.g1']]);
  });

  it('the coverage is complete and its statement names the pieces that covered the subtask', () => {
    const pieces = new Map([['CRM', [okIds('CRM.h1', ['acc-1', 'acc-2']), okIds('CRM.h2', ['acc-3', 'acc-4'])]]]);
    const coverage = buildCoverage(manifest, [wonByPieces], reconcile(manifest, [wonByPieces], pieces));
    expect(coverage.complete).toBe(true);
    expect(coverage.gaps).toEqual([]);
    expect(coverage.statement).toBe(
      'Coverage: four ids, one partition, no overlaps, no gaps. Covered by hedge pieces: CRM by CRM.h1 (ids acc-1 and acc-2) and CRM.h2 (ids acc-3 and acc-4).',
    );
  });
});

describe('reconcile, a subtask whose original handed over to its pieces', () => {
  /** CRM's original read acc-1 and acc-2 and reported findings over them before its hedge came due. */
  const PREFIX = { ids: ['acc-1', 'acc-2'] };
  const frozen = {
    generation: 1,
    sequence: 1,
    writtenAt: '2025-06-01T12:00:05.000Z',
    covered: [PREFIX],
    observed: { ids: ['acc-1', 'acc-2'], recordCount: 2 },
    partial: { covered: [PREFIX], observed: { ids: ['acc-1', 'acc-2'], recordCount: 2 }, findings: { notes: 2 } },
  };
  /** The rest, acc-3 and acc-4, cut in two: CRM.h1 is assigned acc-3, CRM.h2 acc-4. */
  const handedOver = outcome({ subtaskId: 'CRM', state: 'ok', observed: null, sourcesReached: 1, checkpoint: frozen });
  const pieces = new Map([['CRM', [okIds('CRM.h1', ['acc-3']), okIds('CRM.h2', ['acc-4'])]]]);

  it('proves prefix + pieces tile the scope, reads the prefix once and each piece once, and says so', () => {
    const result = reconcile(manifest, [handedOver], pieces);
    expect(result.problems).toEqual([]);
    expect(result.resumed.get('CRM')).toMatchObject({ handedOver: true, problems: [] });
    expect(synthesisInputs(result).map((i) => [i.subtask.id, i.subtask.assigned, i.outcome.findings ?? null])).toEqual([
      ['CRM', PREFIX, { notes: 2 }],
      ['CRM.h1', { ids: ['acc-3'] }, null],
      ['CRM.h2', { ids: ['acc-4'] }, null],
    ]);
    const coverage = buildCoverage(manifest, [handedOver], result);
    expect(coverage.complete).toBe(true);
    expect(coverage.statement).toBe(
      'Coverage: four ids, one partition, no overlaps, no gaps. Covered by hedge pieces: CRM by its own read of ids acc-1 and acc-2 before it handed over, CRM.h1 (id acc-3) and CRM.h2 (id acc-4).',
    );
  });

  it('judges the pieces by the cut from the frozen checkpoint: pieces that re-read the prefix read outside their assignments', () => {
    const wholeCut = new Map([['CRM', [okIds('CRM.h1', ['acc-1', 'acc-2']), okIds('CRM.h2', ['acc-3', 'acc-4'])]]]);
    const codes = reconcile(manifest, [handedOver], wholeCut).problems.map((p) => [p.code, p.subtaskIds]);
    expect(codes).toEqual([
      ['ids_unexpected', ['CRM.h1']],
      ['ids_missing', ['CRM.h1']],
      ['ids_unexpected', ['CRM.h2']],
    ]);
  });

  it('sealed before its pieces finished, it keeps the prefix: the retry is sent only the rest', () => {
    const withRetry = manifestOf({
      universe: { dimension: 'ids', ids: IDS },
      subtasks: [crm],
      policy: { retry: { timed_out: 1, invalid: 0, empty: 0 }, maxRounds: 2 },
    });
    const sealed = outcome({ subtaskId: 'CRM', state: 'timed_out', observed: null, checkpoint: frozen });
    const next = planNextRound(withRetry, [sealed], reconcile(withRetry, [sealed]));
    expect(next.map((s) => [s.id, s.assigned, s.lineage])).toEqual([
      ['CRM.r2', { ids: ['acc-3', 'acc-4'] }, { kind: 'retry', of: 'CRM', attempt: 2, prefix: [PREFIX] }],
    ]);
  });
});
