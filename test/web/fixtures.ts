import { RunResource, type CoverageGap, type SubtaskView } from '../../lib/contract';

/**
 * Run resources shaped like the examples' (examples/tax-2025.json, examples/scout.json), written
 * out by hand so the tests can reason about every position from the dates and ids alone.
 */

/** A subtask view with the examples' defaults; RunResource.parse checks every field. */
const view = (fields: Pick<SubtaskView, 'id' | 'worker' | 'assigned' | 'state' | 'observed'> & Record<string, unknown>): Record<string, unknown> => ({
  round: 1,
  questionIds: ['q1'],
  required: true,
  sources: [],
  sourcesReached: 1,
  usage: { modelCalls: 3, estimatedCost: 21 },
  refusals: [],
  ...fields,
});

const base = {
  createdAt: '2026-11-30T12:00:00.000Z',
  updatedAt: '2026-11-30T12:00:09.000Z',
  budget: { modelCalls: 40, costLimit: 500 },
  usage: { modelCalls: 12, estimatedCost: 84 },
};

/** The tax year: B's data ends on 27 June, and the re-check of 28–30 June finds nothing. */
export const taxRun = (): RunResource =>
  RunResource.parse({
    ...base,
    runId: 'run-tax',
    status: 'succeeded',
    goal: 'Total deductible household expenses for tax year 2025',
    universe: { dimension: 'time', from: '2025-01-01', toExclusive: '2026-01-01', field: 'postedDate' },
    round: 2,
    progress: { dispatched: 5, terminal: 5, byState: { ok: 4, empty: 1 } },
    subtasks: [
      view({
        id: 'A',
        worker: 'tax-statements',
        assigned: { from: '2025-01-01', toExclusive: '2025-04-01' },
        state: 'ok',
        observed: { minDate: '2025-01-01', maxDate: '2025-03-31', recordCount: 18 },
      }),
      view({
        id: 'B',
        worker: 'tax-statements',
        assigned: { from: '2025-04-01', toExclusive: '2025-07-01' },
        state: 'ok',
        observed: { minDate: '2025-04-01', maxDate: '2025-06-27', recordCount: 18 },
      }),
      view({
        id: 'C',
        worker: 'tax-statements',
        assigned: { from: '2025-07-01', toExclusive: '2025-10-01' },
        state: 'ok',
        observed: { minDate: '2025-07-01', maxDate: '2025-09-30', recordCount: 18 },
      }),
      view({
        id: 'D',
        worker: 'tax-statements',
        assigned: { from: '2025-10-01', toExclusive: '2026-01-01' },
        state: 'ok',
        observed: { minDate: '2025-10-01', maxDate: '2025-12-31', recordCount: 18 },
      }),
      view({
        id: 'B.g1',
        worker: 'transaction-feed',
        round: 2,
        assigned: { from: '2025-06-28', toExclusive: '2025-07-01' },
        state: 'empty',
        observed: { minDate: null, maxDate: null, recordCount: 0 },
        usage: { modelCalls: 0, estimatedCost: 0 },
        reason: 'no records in 1 source reached',
        lineage: { kind: 'recheck', of: 'B', gap: { from: '2025-06-28', toExclusive: '2025-07-01' } },
      }),
    ],
    answer: {
      text: 'Deductible total: £1,137.47.',
      result: {},
      coverage: {
        complete: true,
        missingQuestions: [],
        degradedReason: [],
        partitions: 4,
        overlaps: [],
        gaps: [
          {
            from: '2025-06-28',
            toExclusive: '2025-07-01',
            kind: 'observed',
            subtaskId: 'B',
            status: 'confirmed_empty',
            recheckedAgainst: 'transaction-feed',
            recheckSubtaskId: 'B.g1',
            records: 0,
          },
        ],
        problems: [],
        statement:
          'Coverage: 2025-01-01 to 2025-12-31, four partitions, no overlaps. One gap (2025-06-28 to 2025-06-30) re-checked against the transaction feed: zero transactions.',
      },
    },
  });

const SCOUT_IDS = ['web:pricing', 'web:packaging', 'crm:vantage', 'reviews:g2', 'news:vantage'];

/** Scout: C (crm:vantage, the third of five sources) times out twice, so nobody read it. */
export const scoutRun = (): RunResource =>
  RunResource.parse({
    ...base,
    runId: 'run-scout',
    status: 'succeeded',
    goal: 'What changed at Vantage last month?',
    universe: { dimension: 'ids', noun: 'source', ids: SCOUT_IDS },
    round: 2,
    progress: { dispatched: 6, terminal: 6, byState: { ok: 4, timed_out: 2 } },
    subtasks: [
      ...['A', 'B', 'C', 'D', 'E'].map((id, i) =>
        view({
          id,
          worker: `scout-${i}`,
          questionIds: [`q${i + 1}`],
          assigned: { ids: [SCOUT_IDS[i] ?? ''] },
          state: id === 'C' ? 'timed_out' : 'ok',
          observed: id === 'C' ? null : { ids: [SCOUT_IDS[i] ?? ''], recordCount: 1 },
          ...(id === 'C' ? { reason: 'deadline passed', late: [] } : {}),
        }),
      ),
      view({
        id: 'C.r2',
        worker: 'scout-2',
        questionIds: ['q3'],
        round: 2,
        assigned: { ids: ['crm:vantage'] },
        state: 'timed_out',
        observed: null,
        reason: 'deadline passed',
        lineage: { kind: 'retry', of: 'C', attempt: 2 },
        late: [
          {
            receivedAt: '2026-11-30T12:00:08.000Z',
            generation: 1,
            refusedBecause: 'sealed',
            outcome: { subtaskId: 'C.r2', state: 'ok', observed: { ids: ['crm:vantage'], recordCount: 1 } },
          },
        ],
      }),
    ],
    answer: {
      text: 'Vantage raised prices.',
      result: {},
      coverage: {
        complete: false,
        missingQuestions: ['q3'],
        degradedReason: ['C.r2:timed_out'],
        partitions: 5,
        overlaps: [],
        gaps: [{ ids: ['crm:vantage'], kind: 'unread', subtaskId: 'C.r2', reason: 'timed_out', status: 'unchecked' }],
        problems: [],
        statement: 'Coverage: 5 sources. One gap (crm:vantage) not read: C.r2 timed out.',
      },
    },
  });

/** Ticket ids `T-1001` … in order; with `width`, zero-padded numbers from 1 (`T-000001`). */
export const ticketIds = (count: number, width?: number): string[] =>
  Array.from({ length: count }, (_, i) => (width ? `T-${String(i + 1).padStart(width, '0')}` : `T-${1001 + i}`));

/** A gap a ticket run's answer carries, left by the subtask at `lane`. */
export interface TicketGap {
  readonly lane: number;
  readonly ids: readonly string[];
  readonly status: CoverageGap['status'];
  /** `unread`: the subtask did not end `ok` (its whole assignment is the gap). */
  readonly kind?: 'observed' | 'unread';
}

/**
 * A helpdesk backlog of `ids`, split into `lanes` equal blocks A, B, C, … (one question each,
 * q1, q2, …). Each observed gap's ids are left out of its lane's observation; an unread gap's lane
 * timed out. The run succeeded; it is complete only with no gap left unsettled and no question
 * unanswered.
 */
export const ticketRun = (ids: readonly string[], lanes: number, gaps: readonly TicketGap[], missingQuestions: readonly string[] = []): RunResource => {
  const size = Math.ceil(ids.length / lanes);
  const laneId = (i: number) => String.fromCharCode(65 + i);
  const settled = (status: CoverageGap['status']) => status === 'confirmed_empty' || status === 'data_found';
  const complete = missingQuestions.length === 0 && gaps.every((g) => g.kind !== 'unread' && settled(g.status));
  const subtasks = Array.from({ length: lanes }, (_, i) => {
    const assigned = ids.slice(i * size, (i + 1) * size);
    const unread = gaps.some((g) => g.lane === i && g.kind === 'unread');
    const dropped = new Set(gaps.filter((g) => g.lane === i).flatMap((g) => g.ids));
    const read = assigned.filter((id) => !dropped.has(id));
    return view({
      id: laneId(i),
      worker: 'helpdesk',
      questionIds: [`q${i + 1}`],
      assigned: { ids: assigned },
      state: unread ? 'timed_out' : 'ok',
      observed: unread ? null : { ids: read, recordCount: read.length },
      ...(unread ? { reason: 'deadline passed' } : {}),
    });
  });
  return RunResource.parse({
    ...base,
    runId: `run-tickets-${ids.length}`,
    status: 'succeeded',
    goal: `Which of the ${ids.length.toLocaleString('en-GB')} open tickets mention a refund?`,
    universe: { dimension: 'ids', noun: 'ticket', ids },
    round: 1,
    progress: { dispatched: lanes, terminal: lanes, byState: { ok: lanes } },
    subtasks,
    answer: {
      text: 'Refunds are mentioned in the tickets read.',
      result: {},
      coverage: {
        complete,
        missingQuestions,
        degradedReason: gaps.filter((g) => g.kind === 'unread').map((g) => `${laneId(g.lane)}:timed_out`),
        partitions: lanes,
        overlaps: [],
        gaps: gaps.map((g) =>
          g.kind === 'unread'
            ? { ids: g.ids, kind: 'unread', subtaskId: laneId(g.lane), reason: 'timed_out', status: 'unchecked' }
            : {
                ids: g.ids,
                kind: 'observed',
                subtaskId: laneId(g.lane),
                status: g.status,
                ...(g.status === 'unchecked' ? {} : { recheckedAgainst: 'ticket-archive' }),
              },
        ),
        problems: [],
        statement: `Coverage: ${ids.length.toLocaleString('en-GB')} tickets, ${gaps.length} gap${gaps.length === 1 ? '' : 's'}.`,
      },
    },
  });
};
