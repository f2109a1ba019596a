/** The run requests the handler tests send: the tax example cut to a half year, and to one quarter. */
import type { RunRequestInput } from '../../../lib/contract';

const QUARTER_TERMS = { worker: 'tax-statements', required: true, justification: 'the total needs every quarter', deadlineSeconds: 60 } as const;

/**
 * The tax example's tax request cut to its first half year: A reviews Q1, B reviews Q2. `bStart` moves
 * B's start (the tax example's typo wrote March through June: `'2025-03-01'`).
 */
export const halfYearRequest = (overrides: Partial<RunRequestInput> = {}, bStart = '2025-04-01'): RunRequestInput => ({
  goal: 'Total deductible household expenses for the first half of 2025',
  universe: { dimension: 'time', from: '2025-01-01', toExclusive: '2025-07-01' },
  questions: [{ id: 'q1' }, { id: 'q2' }],
  subtasks: [
    {
      ...QUARTER_TERMS,
      id: 'A',
      questionIds: ['q1'],
      scope: { from: '2025-01-01', toExclusive: '2025-04-01' },
      budget: { modelCalls: 4, estimatedCostPerCall: 7 },
    },
    { ...QUARTER_TERMS, id: 'B', questionIds: ['q2'], scope: { from: bStart, toExclusive: '2025-07-01' }, budget: { modelCalls: 4, estimatedCostPerCall: 7 } },
  ],
  policy: { maxRounds: 2 },
  budget: { modelCalls: 40, costLimit: 500 },
  ...overrides,
});

/** The half year with B's deadline at 90 s and A's at 60 s, so each dispatched item shows its own deadline arithmetic. */
export const staggeredDeadlineRequest = (): RunRequestInput => {
  const base = halfYearRequest();
  const [a, b] = base.subtasks ?? [];
  if (!a || !b) throw new Error('the half-year request has A and B');
  return { ...base, subtasks: [a, { ...b, deadlineSeconds: 90 }] };
};

/** Only Q2, one subtask B: the cheapest run whose worker meets June's early statement close. */
export const secondQuarterRequest = (): RunRequestInput => ({
  goal: 'Total deductible household expenses for Q2 2025',
  universe: { dimension: 'time', from: '2025-04-01', toExclusive: '2025-07-01' },
  questions: [{ id: 'q2' }],
  subtasks: [
    {
      ...QUARTER_TERMS,
      id: 'B',
      questionIds: ['q2'],
      scope: { from: '2025-04-01', toExclusive: '2025-07-01' },
      budget: { modelCalls: 4, estimatedCostPerCall: 7 },
    },
  ],
  policy: { maxRounds: 1 },
  budget: { modelCalls: 40, costLimit: 500 },
});
