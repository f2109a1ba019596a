import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DispatchedSubtask, Manifest, Outcome } from '../../lib/contract';
import { buildCoverage, decideStatus, planNextRound, READ_NOTHING, reconcile, withRecheckInputs } from '../../lib/domain';
import { catalogOf, kindInfo, manifestOf, okIds, outcome, withRound } from './fixtures';

/*
 * The re-check rule: a gap is settled only by a source other than the one that produced it. A
 * helpdesk that loses tickets t-4 and t-5 between pages, every time, cannot vouch that they do
 * not exist; the ticket export, another source, can.
 */

const SOURCES = {
  helpdesk: { label: 'helpdesk', recordNoun: 'tickets' },
  'helpdesk-mirrored': { label: 'mirrored helpdesk', recordNoun: 'tickets', alternateSource: 'ticket-export' },
  'ticket-export': { label: 'ticket export', recordNoun: 'tickets' },
};
const TICKETS = ['t-1', 't-2', 't-3', 't-4', 't-5', 't-6'];
const READ = ['t-1', 't-2', 't-3', 't-6'];
const DROPPED = ['t-4', 't-5'];

const helpdeskRun = (worker: keyof typeof SOURCES, extra: { required?: boolean; input?: Record<string, unknown> } = {}): Manifest =>
  manifestOf({
    universe: { dimension: 'ids', noun: 'ticket', ids: TICKETS },
    subtasks: [
      {
        id: 'H',
        worker,
        round: 1,
        questionIds: ['q1'],
        required: extra.required ?? false,
        ...(extra.required ? { justification: 'the backlog report needs every ticket' } : {}),
        deadlineSeconds: 30,
        budget: { modelCalls: 1, estimatedCostPerCall: 1 },
        assigned: { ids: TICKETS },
        ...(extra.input ? { input: extra.input } : {}),
      },
    ],
    questions: [{ id: 'q1' }],
    sources: SOURCES,
  });

/** The manifest after round 2: round 1 plus the re-check planNextRound chose. */
const afterRecheck = (manifest: Manifest, first: Outcome[]): { manifest: Manifest; recheck: DispatchedSubtask } => {
  const [recheck, ...others] = planNextRound(manifest, first);
  expect(others).toEqual([]);
  return { manifest: withRound(manifest, [recheck!]), recheck: recheck! };
};

/** An `empty` ids outcome: its source answered (`sourcesReached`) with nothing. */
const emptyIds = (subtaskId: string, sourcesReached: number): Outcome =>
  outcome({ subtaskId, state: 'empty', observed: { ids: [], recordCount: 0 }, sourcesReached });

describe('a gap re-read by the kind that left it', () => {
  const manifest = helpdeskRun('helpdesk');
  const first = [okIds('H', READ)];

  it('is re-checked by that same kind when it has no alternate source, for exactly the dropped ids', () => {
    const { recheck } = afterRecheck(manifest, first);
    expect(recheck).toMatchObject({ id: 'H.g1', worker: 'helpdesk', assigned: { ids: DROPPED }, lineage: { kind: 'recheck', of: 'H' } });
  });

  it('stays unsettled when the same source again returns nothing: unconfirmed_empty, complete false, said in words', () => {
    const { manifest: both } = afterRecheck(manifest, first);
    const coverage = buildCoverage(both, [...first, emptyIds('H.g1', 1)]);
    expect(coverage.gaps).toEqual([
      { ids: DROPPED, kind: 'observed', subtaskId: 'H', status: 'unconfirmed_empty', recheckedAgainst: 'helpdesk', recheckSubtaskId: 'H.g1', records: 0 },
    ]);
    expect(coverage.complete).toBe(false);
    expect(coverage.degradedReason).toEqual(['H.g1:unconfirmed_empty']);
    expect(coverage.statement).toBe(
      'Coverage: six tickets, one partition, no overlaps. ' +
        'One gap (ids t-4 and t-5) re-read from the helpdesk, which again returned nothing; no other source confirmed it.',
    );
  });

  it('fails a required subtask under onRequiredGap "fail", and degrades it under "degrade"', () => {
    const required = helpdeskRun('helpdesk', { required: true });
    const { manifest: both } = afterRecheck(required, first);
    const outcomes = [...first, emptyIds('H.g1', 1)];
    const reconciliation = reconcile(both, outcomes);
    const decision = decideStatus(both, buildCoverage(both, outcomes, reconciliation), reconciliation);
    expect(decision.status).toBe('failed');
    expect(decision.status === 'failed' ? decision.error.unmet : []).toEqual([{ who: 'H.g1', why: 'unconfirmed_empty' }]);

    const degrading = { ...both, policy: { ...both.policy!, onRequiredGap: 'degrade' as const } };
    expect(decideStatus(degrading, buildCoverage(degrading, outcomes, reconciliation), reconciliation)).toEqual({ status: 'succeeded', degraded: true });
  });

  it('is settled when the same kind finds the data this time: data_found, complete', () => {
    const { manifest: both } = afterRecheck(manifest, first);
    const coverage = buildCoverage(both, [...first, okIds('H.g1', DROPPED)]);
    expect(coverage.gaps).toEqual([
      { ids: DROPPED, kind: 'observed', subtaskId: 'H', status: 'data_found', recheckedAgainst: 'helpdesk', recheckSubtaskId: 'H.g1', records: 2 },
    ]);
    expect(coverage.complete).toBe(true);
  });

  it('stays unsettled when the re-check read nothing at all (it asked no source), whichever kind ran it', () => {
    const readNothing = (id: string) => outcome({ subtaskId: id, state: 'ok', observed: { ids: [], recordCount: 0 }, sourcesReached: 0, reason: READ_NOTHING });
    const same = afterRecheck(manifest, first).manifest;
    expect(buildCoverage(same, [...first, readNothing('H.g1')]).statement).toContain(
      'One gap (ids t-4 and t-5) re-read from the helpdesk, which again read none of it; no other source confirmed it.',
    );
    const mirrored = afterRecheck(helpdeskRun('helpdesk-mirrored'), first).manifest;
    const coverage = buildCoverage(mirrored, [...first, readNothing('H.g1')]);
    expect(coverage.gaps[0]).toMatchObject({ status: 'unconfirmed_empty', recheckedAgainst: 'ticket-export', records: 0 });
    expect(coverage.complete).toBe(false);
    expect(coverage.statement).toContain('One gap (ids t-4 and t-5) re-checked against the ticket export, which read none of it; no source confirmed it.');
  });
});

describe('a gap re-checked against another source', () => {
  const manifest = helpdeskRun('helpdesk-mirrored', { input: { pageSize: 20 } });
  const first = [okIds('H', READ)];

  it('goes to the alternate kind, and an empty answer from it confirms the gap empty', () => {
    const { manifest: both, recheck } = afterRecheck(manifest, first);
    expect(recheck).toMatchObject({ id: 'H.g1', worker: 'ticket-export', assigned: { ids: DROPPED } });
    const coverage = buildCoverage(both, [...first, emptyIds('H.g1', 1)]);
    expect(coverage.gaps).toEqual([
      { ids: DROPPED, kind: 'observed', subtaskId: 'H', status: 'confirmed_empty', recheckedAgainst: 'ticket-export', recheckSubtaskId: 'H.g1', records: 0 },
    ]);
    expect(coverage.complete).toBe(true);
    expect(coverage.statement).toContain('One gap (ids t-4 and t-5) re-checked against the ticket export: zero tickets.');
  });

  it('is dispatched with the input its kind takes: the primary maps its own (recheckInput); same-kind re-checks and retries keep theirs', () => {
    const catalog = catalogOf([
      kindInfo({
        kind: 'helpdesk-mirrored',
        dimension: 'ids',
        alternateSource: 'ticket-export',
        recheckInput: (input) => ({ format: 'csv', rows: Number(input?.pageSize) * 5 }),
      }),
      kindInfo({ kind: 'ticket-export', dimension: 'ids' }),
      kindInfo({ kind: 'helpdesk', dimension: 'ids' }),
    ]);
    const planned = planNextRound(manifest, first);
    expect(planned[0]?.input).toEqual({ pageSize: 20 });
    const mapped = withRecheckInputs(planned, manifest, catalog);
    expect(mapped.map((s) => [s.id, s.worker, s.input])).toEqual([['H.g1', 'ticket-export', { format: 'csv', rows: 100 }]]);

    const same = helpdeskRun('helpdesk', { input: { pageSize: 20 } });
    expect(withRecheckInputs(planNextRound(same, first), same, catalog).map((s) => s.input)).toEqual([{ pageSize: 20 }]);
    const retry: DispatchedSubtask = { ...planned[0]!, id: 'H.g1.r2', input: { format: 'csv', rows: 100 }, lineage: { kind: 'retry', of: 'H.g1', attempt: 2 } };
    expect(withRecheckInputs([retry], manifest, catalog)).toEqual([retry]);
  });
});

describe('an ok outcome that read nothing (its worker asked no source)', () => {
  it('leaves its whole time assignment as an observed gap, never a silent "complete"', () => {
    const manifest = manifestOf({
      universe: { dimension: 'time', from: '2025-01-01', toExclusive: '2025-02-01' },
      subtasks: [
        {
          id: 'A',
          worker: 'transaction-feed',
          round: 1,
          deadlineSeconds: 30,
          budget: { modelCalls: 1, estimatedCostPerCall: 1 },
          assigned: { from: '2025-01-01', toExclusive: '2025-02-01' },
        },
      ],
      policy: { maxRounds: 1 },
    });
    const observed = { minDate: null, maxDate: null, recordCount: 0 };
    const nothing = outcome({ subtaskId: 'A', state: 'ok', observed, sourcesReached: 0, reason: READ_NOTHING });
    const coverage = buildCoverage(manifest, [nothing]);
    expect(coverage.gaps).toEqual([{ from: '2025-01-01', toExclusive: '2025-02-01', kind: 'observed', subtaskId: 'A', status: 'unchecked' }]);
    expect(coverage.complete).toBe(false);
  });
});

describe("the starter's step 6: a worker told to skip vendor/ (examples/starter)", () => {
  it('reports the skipped file as not inspected, re-read by the same kind and left unconfirmed, never as an unreachable source', () => {
    const files = [{ path: 'src/app.ts' }, { path: 'src/util.ts' }, { path: 'vendor/left-pad.js' }];
    const delegation = { deadlineSeconds: 30, budget: { modelCalls: 1, estimatedCostPerCall: 1 } };
    const manifest = manifestOf({
      universe: { dimension: 'paths', files },
      subtasks: [
        { id: 'R1', worker: 'todo-review', round: 1, assigned: { files: files.slice(0, 2) }, ...delegation },
        { id: 'R2', worker: 'todo-review', round: 1, assigned: { files: files.slice(2) }, input: { ignore: ['vendor/'] }, ...delegation },
      ],
      sources: { 'todo-review': { label: 'repository', recordNoun: 'lines' } },
    });
    // R1 reads its two files (6 + 3 lines); R2 asks for nothing: ok, an empty observation.
    const readNothing = (id: string) =>
      outcome({ subtaskId: id, state: 'ok', observed: { files: [], recordCount: 0 }, sourcesReached: 0, reason: READ_NOTHING });
    const first = [outcome({ subtaskId: 'R1', state: 'ok', observed: { files: files.slice(0, 2), recordCount: 9 }, sourcesReached: 2 }), readNothing('R2')];
    const { manifest: both, recheck } = afterRecheck(manifest, first);
    // No alternate source: the same kind, with the same input, re-reads exactly the skipped file.
    expect(recheck).toMatchObject({
      id: 'R2.g1',
      worker: 'todo-review',
      input: { ignore: ['vendor/'] },
      assigned: { files: [{ path: 'vendor/left-pad.js' }] },
    });

    const coverage = buildCoverage(both, [...first, readNothing('R2.g1')]);
    expect(coverage.problems.map((p) => [p.code, p.subtaskIds])).toEqual([['lines_not_inspected', ['R2']]]);
    expect(coverage.gaps).toEqual([
      {
        files: [{ path: 'vendor/left-pad.js' }],
        kind: 'observed',
        subtaskId: 'R2',
        status: 'unconfirmed_empty',
        recheckedAgainst: 'todo-review',
        recheckSubtaskId: 'R2.g1',
        records: 0,
      },
    ]);
    expect(coverage.complete).toBe(false);
    expect(coverage.statement).toBe(
      'Coverage: three files, two partitions, no overlaps. ' +
        'One gap (vendor/left-pad.js) re-read from the repository, which again read none of it; no other source confirmed it.',
    );
  });
});

/** How a random re-check ended. */
const recheckFate = fc.constantFrom('ok', 'read_nothing', 'empty', 'unreachable', 'timed_out', 'missing');

describe('the re-check rule over random runs', () => {
  it('never confirms a gap empty unless another kind reached its source and found nothing', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<keyof typeof SOURCES>('helpdesk', 'helpdesk-mirrored'),
        fc.subarray(TICKETS, { minLength: 0, maxLength: TICKETS.length }),
        recheckFate,
        (worker, read, fate) => {
          const manifest = helpdeskRun(worker);
          const first = [okIds('H', read, Math.max(read.length, 1))];
          const planned = planNextRound(manifest, first);
          const both = withRound(manifest, planned);
          const outcomes = [...first];
          const recheck = planned[0];
          if (recheck && fate === 'ok') outcomes.push(okIds(recheck.id, 'ids' in recheck.assigned ? recheck.assigned.ids : []));
          if (recheck && fate === 'read_nothing') {
            outcomes.push(outcome({ subtaskId: recheck.id, state: 'ok', observed: { ids: [], recordCount: 0 }, sourcesReached: 0 }));
          }
          if (recheck && (fate === 'empty' || fate === 'unreachable')) outcomes.push(emptyIds(recheck.id, fate === 'empty' ? 1 : 0));
          if (recheck && fate === 'timed_out') outcomes.push(outcome({ subtaskId: recheck.id, state: 'timed_out', observed: null }));
          const coverage = buildCoverage(both, outcomes);
          const byId = new Map(both.subtasks.map((s) => [s.id, s]));
          const outcomeOf = new Map(outcomes.map((o) => [o.subtaskId, o]));
          for (const gap of coverage.gaps.filter((g) => g.status === 'confirmed_empty')) {
            const primary = byId.get(gap.subtaskId ?? '');
            const confirming = outcomeOf.get(gap.recheckSubtaskId ?? '');
            expect(gap.recheckedAgainst).not.toBe(primary?.worker);
            expect(byId.get(gap.recheckSubtaskId ?? '')?.worker).toBe(gap.recheckedAgainst);
            expect(confirming?.state).toBe('empty');
            expect(confirming?.sourcesReached).toBeGreaterThan(0);
          }
          // A gap the helpdesk left and only the helpdesk re-read can never make the answer complete.
          if (worker === 'helpdesk' && coverage.gaps.length > 0 && fate !== 'ok') expect(coverage.complete).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });
});
