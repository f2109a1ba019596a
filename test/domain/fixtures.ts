import { Manifest, Outcome, type DispatchedSubtask, type ManifestInput, type OutcomeInput, type RunRequestInput, type SourceLabel } from '../../lib/contract';
import { validateRunRequest, type InputIssue, type WorkerCatalog, type WorkerKindInfo } from '../../lib/domain';

/** A worker kind for tests: time by default, any input accepted unless `validateInput` says otherwise. */
export const kindInfo = (info: Partial<WorkerKindInfo> & Pick<WorkerKindInfo, 'kind'>): WorkerKindInfo => ({
  dimension: 'time',
  label: info.kind.replace(/-/g, ' '),
  recordNoun: 'records',
  validateInput: (): InputIssue[] => [],
  ...info,
});

/** A catalog over a fixed list of kinds. */
export const catalogOf = (kinds: readonly WorkerKindInfo[]): WorkerCatalog => ({
  get: (kind) => kinds.find((k) => k.kind === kind),
  kinds: () => kinds.map((k) => k.kind),
});

/** `catering-quote` requires `{ sku, guests }` with a whole number of guests (the catering example's inquiry). */
const cateringInput = (input: unknown): InputIssue[] => {
  const record = typeof input === 'object' && input !== null ? input : {};
  const issues: InputIssue[] = [];
  if (typeof Reflect.get(record, 'sku') !== 'string') issues.push({ path: 'sku', message: 'must be a SKU such as SKU-VANILLA' });
  if (!Number.isInteger(Reflect.get(record, 'guests'))) issues.push({ path: 'guests', message: 'must be a whole number of guests' });
  return issues;
};

/** The kinds the reference catalog will offer, as the planner sees them. */
export const testCatalog = catalogOf([
  kindInfo({ kind: 'tax-statements', label: 'monthly statements', recordNoun: 'transactions', alternateSource: 'transaction-feed' }),
  kindInfo({ kind: 'transaction-feed', label: 'transaction feed', recordNoun: 'transactions' }),
  kindInfo({ kind: 'scout-pricing', dimension: 'ids', label: 'pricing pages', recordNoun: 'pages' }),
  kindInfo({ kind: 'scout-packaging', dimension: 'ids', label: 'packaging pages', recordNoun: 'pages' }),
  kindInfo({ kind: 'scout-reviews', dimension: 'ids', label: 'review sites', recordNoun: 'reviews' }),
  kindInfo({ kind: 'scout-crm', dimension: 'ids', label: 'CRM notes', recordNoun: 'notes' }),
  kindInfo({ kind: 'scout-news', dimension: 'ids', label: 'news', recordNoun: 'articles' }),
  kindInfo({ kind: 'catering-quote', dimension: 'ids', label: 'catering quotes', recordNoun: 'quotes', validateInput: cateringInput }),
  kindInfo({ kind: 'ticket-triage', dimension: 'ids', label: 'ticket queue', recordNoun: 'tickets' }),
  kindInfo({ kind: 'code-review', dimension: 'paths', label: 'code review', recordNoun: 'findings' }),
]);

/** The `sources` block a dispatcher records in the manifest from the catalog. */
export const sourcesOf = (catalog: WorkerCatalog): Record<string, SourceLabel> =>
  Object.fromEntries(
    catalog.kinds().flatMap((kind) => {
      const info = catalog.get(kind);
      if (!info) return [];
      return [[kind, { label: info.label, recordNoun: info.recordNoun, ...(info.alternateSource ? { alternateSource: info.alternateSource } : {}) }]];
    }),
  );

export const PLAN_OPTIONS = { maxDeadlineSeconds: 900 } as const;

/** A manifest as the dispatcher records it (parsed, defaults applied). */
export const manifestOf = (input: Omit<ManifestInput, 'sources'> & { sources?: ManifestInput['sources'] }): Manifest =>
  Manifest.parse({ sources: sourcesOf(testCatalog), ...input });

/** The manifest with one more round of subtasks appended. */
export const withRound = (manifest: Manifest, subtasks: readonly DispatchedSubtask[]): Manifest =>
  Manifest.parse({ ...manifest, subtasks: [...manifest.subtasks, ...subtasks] });

export const outcome = (input: OutcomeInput): Outcome => Outcome.parse(input);

/** An `ok` time outcome whose records run from `minDate` to `maxDate` inclusive. */
export const okTime = (subtaskId: string, minDate: string, maxDate: string, recordCount: number, sourcesReached = 3): Outcome =>
  outcome({ subtaskId, state: 'ok', observed: { minDate, maxDate, recordCount }, sourcesReached, usage: { modelCalls: 2, estimatedCost: 14 } });

/** An `empty` outcome; `sourcesReached: 0` means its source was unreachable. */
export const emptyTime = (subtaskId: string, sourcesReached: number): Outcome =>
  outcome({ subtaskId, state: 'empty', observed: { minDate: null, maxDate: null, recordCount: 0 }, sourcesReached });

/** An outcome sealed at its deadline (or cancelled, invalid…) with nothing observed. */
export const ended = (subtaskId: string, state: 'timed_out' | 'invalid' | 'cancelled'): Outcome =>
  outcome({ subtaskId, state, observed: null, reason: state === 'timed_out' ? 'deadline passed; never claimed' : state });

/** An `ok` ids outcome. */
export const okIds = (subtaskId: string, ids: string[], recordCount = ids.length): Outcome =>
  outcome({ subtaskId, state: 'ok', observed: { ids, recordCount }, sourcesReached: 1 });

/** The tax year: four quarters by hand, `bStart` being Worker B's first day. */
export const taxRequest = (bStart = '2025-04-01'): RunRequestInput => {
  const quarter = (id: string, from: string, toExclusive: string) => ({
    id,
    worker: 'tax-statements',
    questionIds: ['q1'],
    scope: { from, toExclusive },
    required: true,
    justification: 'the total needs every quarter',
    deadlineSeconds: 60,
    budget: { modelCalls: 4, estimatedCostPerCall: 7 },
  });
  return {
    goal: 'Total deductible household expenses for tax year 2025',
    universe: { dimension: 'time', from: '2025-01-01', toExclusive: '2026-01-01', field: 'postedDate' },
    questions: [{ id: 'q1' }],
    subtasks: [
      quarter('A', '2025-01-01', '2025-04-01'),
      quarter('B', bStart, '2025-07-01'),
      quarter('C', '2025-07-01', '2025-10-01'),
      quarter('D', '2025-10-01', '2026-01-01'),
    ],
    policy: { retry: { timed_out: 1, invalid: 1, empty: 0 }, onRequiredGap: 'fail', onOptionalGap: 'degrade', maxRounds: 2 },
    budget: { modelCalls: 40, costLimit: 500 },
  };
};

/** A dispatched round-1 `tax-statements` subtask over `[from, toExclusive)`, as a hand-edited manifest would hold it. */
export const quarterSubtask = (id: string, from: string, toExclusive: string, extra: Partial<DispatchedSubtask> = {}) => ({
  id,
  worker: 'tax-statements',
  round: 1,
  questionIds: ['q1'],
  required: true,
  justification: 'the total needs every quarter',
  deadlineSeconds: 60,
  budget: { modelCalls: 4, estimatedCostPerCall: 7 },
  assigned: { from, toExclusive },
  ...extra,
});

/** The tax year's universe. */
export const TAX_YEAR = { dimension: 'time', from: '2025-01-01', toExclusive: '2026-01-01' } as const;

/** The fixed four quarters of 2025, dispatched. */
export const taxManifest = (policy?: ManifestInput['policy']): Manifest =>
  manifestOf({
    universe: TAX_YEAR,
    subtasks: [
      quarterSubtask('A', '2025-01-01', '2025-04-01'),
      quarterSubtask('B', '2025-04-01', '2025-07-01'),
      quarterSubtask('C', '2025-07-01', '2025-10-01'),
      quarterSubtask('D', '2025-10-01', '2026-01-01'),
    ],
    ...(policy ? { policy } : {}),
  });

/** Round 1 with every quarter fully observed except those overridden. */
export const fullQuarters = (overrides: Record<string, Outcome> = {}): Outcome[] =>
  [
    okTime('A', '2025-01-01', '2025-03-31', 190),
    okTime('B', '2025-04-01', '2025-06-30', 214),
    okTime('C', '2025-07-01', '2025-09-30', 175),
    okTime('D', '2025-10-01', '2025-12-31', 230),
  ].map((o) => overrides[o.subtaskId] ?? o);

/** The problems a request is rejected with (an empty list when it is accepted). */
export const rejectionOf = (request: unknown) => {
  const result = validateRunRequest(request, testCatalog, PLAN_OPTIONS);
  return result.ok ? [] : result.problems;
};

/** The issue's case: the end lies in year 10000 in the offset of `from`, where split pieces are written. */
export const farFuture = {
  goal: 'far future',
  universe: { dimension: 'time', from: '9999-12-31T00:00:00+00:00', toExclusive: '9999-12-31T23:00:00-12:00' },
  split: { worker: 'tax-statements', parts: 2, deadlineSeconds: 60, budget: { modelCalls: 4, estimatedCostPerCall: 7 } },
  budget: { modelCalls: 40, costLimit: 500 },
};
