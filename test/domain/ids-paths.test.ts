import { describe, expect, it } from 'vitest';
import type { RunRequestInput } from '../../lib/contract';
import { buildCoverage, END_OF_FILE, planNextRound, reconcile, validateRunRequest } from '../../lib/domain';
import { manifestOf, okIds, outcome, PLAN_OPTIONS, rejectionOf, testCatalog, withRound } from './fixtures';

/** The same contract over ids (a ticket backlog) and paths (a review by file). */
const delegation = { required: false, deadlineSeconds: 120, budget: { modelCalls: 2, estimatedCostPerCall: 3 } };
const budget = { modelCalls: 10, costLimit: 50 };

const BACKLOG = Array.from({ length: 12 }, (_, i) => `t-${101 + i}`);

const plan = (request: RunRequestInput) => {
  const result = validateRunRequest(request, testCatalog, PLAN_OPTIONS);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return manifestOf({ universe: result.request.universe, subtasks: result.subtasks, policy: result.request.policy });
};

describe('ids: a support backlog split by chunks of five tickets', () => {
  const triage = () =>
    plan({
      goal: 'Close or defer every ticket in the backlog',
      universe: { dimension: 'ids', ids: BACKLOG, noun: 'ticket' },
      split: { worker: 'ticket-triage', chunkSize: 5, ...delegation },
      budget,
    });

  it('generates A, B, C in backlog order, the last one short', () => {
    expect(triage().subtasks.map((s) => [s.id, s.assigned])).toEqual([
      ['A', { ids: ['t-101', 't-102', 't-103', 't-104', 't-105'] }],
      ['B', { ids: ['t-106', 't-107', 't-108', 't-109', 't-110'] }],
      ['C', { ids: ['t-111', 't-112'] }],
    ]);
  });

  it('is complete when the union of the ids worked equals the backlog', () => {
    const manifest = triage();
    const outcomes = [okIds('A', ['t-105', 't-101', 't-102', 't-103', 't-104']), okIds('B', BACKLOG.slice(5, 10)), okIds('C', ['t-112', 't-111'])];
    expect(buildCoverage(manifest, outcomes)).toMatchObject({ complete: true, gaps: [], degradedReason: [], problems: [] });
  });

  it('names the ticket a worker skipped and the one it was never given, then re-checks only the skipped one', () => {
    const manifest = triage();
    const outcomes = [okIds('A', BACKLOG.slice(0, 5)), okIds('B', ['t-106', 't-107', 't-109', 't-110', 't-113']), okIds('C', ['t-111', 't-112'])];
    const { problems, observedGaps } = reconcile(manifest, outcomes);

    expect(problems.map((p) => ({ code: p.code, subtaskIds: p.subtaskIds, ids: p.ids }))).toEqual([
      { code: 'ids_unexpected', subtaskIds: ['B'], ids: ['t-113'] },
      { code: 'ids_missing', subtaskIds: ['B'], ids: ['t-108'] },
    ]);
    expect(observedGaps).toEqual([{ subtaskId: 'B', worker: 'ticket-triage', number: 1, code: 'ids_missing', region: { ids: ['t-108'] } }]);
    expect(planNextRound(manifest, outcomes).map((s) => [s.id, s.worker, s.assigned, s.lineage])).toEqual([
      ['B.g1', 'ticket-triage', { ids: ['t-108'] }, { kind: 'recheck', of: 'B', gap: { ids: ['t-108'] } }],
    ]);
  });

  it('folds the re-checked ticket in and still reports the unexpected one', () => {
    const first = triage();
    const roundOne = [okIds('A', BACKLOG.slice(0, 5)), okIds('B', ['t-106', 't-107', 't-109', 't-110', 't-113']), okIds('C', ['t-111', 't-112'])];
    const manifest = withRound(first, planNextRound(first, roundOne));
    const coverage = buildCoverage(manifest, [...roundOne, okIds('B.g1', ['t-108'])]);

    expect(coverage.complete).toBe(false);
    expect(coverage.degradedReason).toEqual(['B:ids_unexpected']);
    expect(coverage.gaps).toEqual([
      { kind: 'observed', subtaskId: 'B', ids: ['t-108'], status: 'data_found', recheckedAgainst: 'ticket-triage', recheckSubtaskId: 'B.g1', records: 1 },
    ]);
    expect(coverage.statement).toBe(
      'Coverage: twelve tickets, three partitions, no overlaps. One gap (id t-108) re-checked against the ticket queue: one ticket found and included. Observation problems: B reported ids it was not assigned (id t-113).',
    );
  });

  it('rejects a hand-written plan with a repeated backlog id, an overlap, a gap and an id outside the backlog', () => {
    const problems = rejectionOf({
      goal: 'triage',
      universe: { dimension: 'ids', ids: ['t-1', 't-2', 't-3', 't-4', 't-2'] },
      subtasks: [
        { id: 'A', worker: 'ticket-triage', scope: { ids: ['t-1', 't-2'] }, ...delegation },
        { id: 'B', worker: 'ticket-triage', scope: { ids: ['t-2', 't-3', 't-9'] }, ...delegation },
      ],
      budget,
    });

    expect(problems).toEqual([
      { code: 'duplicate_universe_id', path: 'universe.ids.4', ids: ['t-2'], message: 'id t-2 appears more than once in the universe' },
      {
        code: 'scope_outside_universe',
        path: 'subtasks.1.scope.ids',
        subtaskIds: ['B'],
        ids: ['t-9'],
        message: 'subtask B covers t-9, outside the universe of 4 ids',
      },
      { code: 'assignment_gap', path: 'universe.ids', subtaskIds: [], ids: ['t-4'], message: 'no subtask is assigned t-4' },
      { code: 'assignment_overlap', path: 'subtasks.1.scope.ids', subtaskIds: ['A', 'B'], ids: ['t-2'], message: 'subtasks A and B are both assigned t-2' },
    ]);
  });
});

describe('paths: a code review split by file groups', () => {
  const universe = {
    dimension: 'paths' as const,
    files: [{ path: 'src/a.ts', lines: [[1, 200]] as [number, number][] }, { path: 'src/b.ts' }, { path: 'src/c.ts' }],
  };
  const review = () =>
    plan({
      goal: 'Review the diff',
      universe,
      split: { worker: 'code-review', groups: [[{ path: 'src/a.ts', lines: [[1, 200]] }], [{ path: 'src/b.ts' }, { path: 'src/c.ts' }]], ...delegation },
      budget,
    });
  const inspected = (subtaskId: string, files: { path: string; lines?: [number, number][] }[], recordCount = 4) =>
    outcome({ subtaskId, state: 'ok', observed: { files, recordCount }, sourcesReached: 1 });

  it('reconciles the files and line ranges inspected: unread lines, an unread tail and a file outside the assignment', () => {
    const manifest = review();
    const outcomes = [
      inspected('A', [{ path: 'src/a.ts', lines: [[1, 120]] }]),
      inspected('B', [{ path: 'src/b.ts' }, { path: 'src/c.ts', lines: [[1, 40]] }, { path: 'src/d.ts' }]),
    ];
    const { problems, observedGaps } = reconcile(manifest, outcomes);

    expect(problems.map((p) => [p.code, p.subtaskIds, p.files, p.message])).toEqual([
      ['lines_not_inspected', ['A'], [{ path: 'src/a.ts', lines: [[121, 200]] }], 'A did not inspect src/a.ts:121-200'],
      ['observed_outside_assignment', ['B'], [{ path: 'src/d.ts' }], 'B inspected src/d.ts, outside its assignment'],
      ['lines_not_inspected', ['B'], [{ path: 'src/c.ts', lines: [[41, END_OF_FILE]] }], 'B did not inspect src/c.ts:41-end'],
    ]);
    expect(observedGaps.map((g) => [g.subtaskId, g.number])).toEqual([
      ['A', 1],
      ['B', 1],
    ]);
  });

  it('is complete when every file was inspected as assigned', () => {
    const manifest = review();
    const outcomes = [
      inspected('A', [
        {
          path: 'src/a.ts',
          lines: [
            [1, 100],
            [101, 200],
          ],
        },
      ]),
      inspected('B', [{ path: 'src/c.ts' }, { path: 'src/b.ts' }]),
    ];
    expect(buildCoverage(manifest, outcomes)).toMatchObject({ complete: true, problems: [] });
  });

  it('counts whole-file inspection of a line-range assignment as reading outside it', () => {
    const manifest = review();
    const outcomes = [inspected('A', [{ path: 'src/a.ts' }]), inspected('B', [{ path: 'src/b.ts' }, { path: 'src/c.ts' }])];
    expect(reconcile(manifest, outcomes).problems.map((p) => [p.code, p.files])).toEqual([
      ['observed_outside_assignment', [{ path: 'src/a.ts', lines: [[201, END_OF_FILE]] }]],
    ]);
  });

  it('states unread ranges with inclusive line numbers', () => {
    const manifest = review();
    const outcomes = [inspected('A', [{ path: 'src/a.ts', lines: [[1, 120]] }]), inspected('B', [{ path: 'src/b.ts' }, { path: 'src/c.ts' }])];
    expect(buildCoverage(manifest, outcomes).statement).toBe(
      'Coverage: three files, two partitions, no overlaps. One gap (src/a.ts lines 121-200) not re-checked.',
    );
  });

  it('rejects groups that overlap on lines 100-120 and leave lines 201-250 unassigned', () => {
    const problems = rejectionOf({
      goal: 'Review',
      universe: { dimension: 'paths', files: [{ path: 'src/a.ts', lines: [[1, 250]] }] },
      split: { worker: 'code-review', groups: [[{ path: 'src/a.ts', lines: [[1, 120]] }], [{ path: 'src/a.ts', lines: [[100, 200]] }]], ...delegation },
      budget,
    });

    expect(problems).toEqual([
      {
        code: 'assignment_overlap',
        path: 'split.groups.1',
        subtaskIds: ['A', 'B'],
        files: [{ path: 'src/a.ts', lines: [[100, 120]] }],
        message: 'subtasks A and B both cover src/a.ts:100-120',
      },
      {
        code: 'assignment_gap',
        path: 'split.groups.1',
        subtaskIds: ['B'],
        files: [{ path: 'src/a.ts', lines: [[201, 250]] }],
        message: 'no subtask covers src/a.ts:201-250 (next to B)',
      },
    ]);
  });
});
