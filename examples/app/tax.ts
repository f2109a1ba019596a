import { z } from 'zod';
import { parseTimePoint, TimePoint, type Scope } from '../../lib/contract';
import {
  defineWorker,
  type OfflineScript,
  promptJson,
  type TimeRangeRequest,
  timeSeriesSource,
  toolSpec,
  userText,
  type WorkerModel,
  WorkerError,
} from '../../lib/workers';
import statementsFile from './fixtures/statements-2025.json' with { type: 'json' };
import { KIND_NAMES } from './kind-names';

/**
 * The household tax example: `tax-statements` reads monthly bank statements (June's
 * closes on the 27th, so nothing after it is in any statement) and `transaction-feed`, its
 * alternate source, reads the bank's transaction feed for the whole year. Amounts are integer
 * pence; a transaction is deductible when it is a charitable donation, a home-office cost or a
 * medical cost.
 */

const Transaction = z.object({
  id: z.string().min(1),
  postedDate: TimePoint,
  description: z.string(),
  category: z.string().min(1),
  amountPence: z.int().min(0),
});
type Transaction = z.infer<typeof Transaction>;

const StatementsFile = z.object({
  currency: z.literal('GBP'),
  statements: z.array(z.object({ id: z.string().min(1), opens: TimePoint, closes: TimePoint, transactions: z.array(Transaction) })),
});

/** The committed fixture, parsed once: a malformed edit fails at import, naming the field. */
const { statements } = StatementsFile.parse(statementsFile);

/**
 * The categories that count towards the deductible total.
 *
 * @example
 * DEDUCTIBLE_CATEGORIES.includes('medical') // true
 */
export const DEDUCTIBLE_CATEGORIES: readonly string[] = ['charity', 'home-office', 'medical'];

/**
 * A statement's transaction, tagged with the statement it came from.
 *
 * @example
 * const row: StatementTransaction = { id: 'tx-2025-06-27', postedDate: '2025-06-27', description: 'Broadband', category: 'utilities', amountPence: 3200, statementId: 'stmt-2025-06' };
 */
export type StatementTransaction = Transaction & { readonly statementId: string };

const DAY_MS = 86_400_000;
const ms = (point: string): number => parseTimePoint(point)?.ms ?? Number.NaN;

/** Whether a period of whole days `[opens, closes]` meets the half-open `range`. */
const meets = (opens: string, closes: string, range: TimeRangeRequest): boolean => ms(opens) < ms(range.toExclusive) && ms(closes) + DAY_MS > ms(range.from);

/**
 * Findings of both tax kinds: they share this schema so a re-check's data merges into the total.
 *
 * @example
 * DeductibleFindings.parse({ currency: 'GBP', totalDeductiblePence: 23499, transactions: 18, deductibleTransactions: 6 });
 */
export const DeductibleFindings = z.object({
  currency: z.literal('GBP'),
  totalDeductiblePence: z.int().min(0),
  transactions: z.int().min(0),
  deductibleTransactions: z.int().min(0),
});
export type DeductibleFindings = z.infer<typeof DeductibleFindings>;

const sumDeductible = (findings: readonly DeductibleFindings[]) => {
  const totalDeductiblePence = findings.reduce((sum, item) => sum + item.totalDeductiblePence, 0);
  return {
    currency: 'GBP' as const,
    totalDeductiblePence,
    /** Pounds, for display; the pence figure is the exact one. */
    totalDeductible: totalDeductiblePence / 100,
    transactions: findings.reduce((sum, item) => sum + item.transactions, 0),
    deductibleTransactions: findings.reduce((sum, item) => sum + item.deductibleTransactions, 0),
  };
};

const pounds = new Intl.NumberFormat('en-GB', { style: 'currency', currency: 'GBP' });

const describeDeductible = (result: ReturnType<typeof sumDeductible>): string =>
  `Deductible total: ${pounds.format(result.totalDeductiblePence / 100)} from ${result.transactions} transactions (${result.deductibleTransactions} deductible).`;

const isDeductible = (transaction: { readonly category: string }): boolean => DEDUCTIBLE_CATEGORIES.includes(transaction.category);

// ---------------------------------------------------------------- the model's classification

/**
 * The model's classification of a statement could not be used.
 *
 * @example
 * throw new ClassificationInvalid('stmt-2025-06', 'the model did not call record_deductible with a list of ids');
 */
export class ClassificationInvalid extends WorkerError {
  override readonly name = 'ClassificationInvalid';
  constructor(
    readonly statement: string,
    readonly problem: string,
    options?: ErrorOptions,
  ) {
    super(`classification of ${statement} is unusable: ${problem}`, options);
  }
}

const RECORD_DEDUCTIBLE = toolSpec(
  'record_deductible',
  "Record which of the statement's transactions are deductible household expenses.",
  z.object({ transactionIds: z.array(z.string()).describe('Ids of the deductible transactions; empty when none are.') }),
);

const CLASSIFY_SYSTEM =
  'You review household bank transactions for a tax return. Charitable donations, home-office costs and medical costs are deductible; nothing else is. Call record_deductible once with the ids of the deductible transactions.';

const ClassificationPrompt = z.object({
  statement: z.string(),
  transactions: z.array(z.object({ id: z.string(), description: z.string(), category: z.string(), amountPence: z.int() })),
});

const Classification = z.object({ transactionIds: z.array(z.string()) });

/**
 * The offline model's answer to `classify-deductible`: the category rule a careful reader
 * would apply, so examples and tests are deterministic.
 *
 * @example
 * createOfflineModel({ scripts: { 'classify-deductible': classifyDeductibleOffline } });
 */
export const classifyDeductibleOffline: OfflineScript = (request) => {
  const prompt = ClassificationPrompt.safeParse(promptJson(request));
  const ids = prompt.success ? prompt.data.transactions.filter(isDeductible).map((transaction) => transaction.id) : [];
  return { toolCalls: [{ id: 'offline-classify-1', name: RECORD_DEDUCTIBLE.name, input: { transactionIds: ids } }] };
};

/** One model call per statement: which of these transactions are deductible? */
const classifyStatement = async (model: WorkerModel, statementId: string, rows: readonly StatementTransaction[]): Promise<Set<string>> => {
  const prompt = {
    statement: statementId,
    transactions: rows.map(({ id, description, category, amountPence }) => ({ id, description, category, amountPence })),
  };
  const reply = await model.call({
    task: 'classify-deductible',
    system: CLASSIFY_SYSTEM,
    messages: [userText(JSON.stringify(prompt))],
    tools: [RECORD_DEDUCTIBLE],
    toolChoice: { tool: RECORD_DEDUCTIBLE.name },
  });
  const call = reply.toolCalls.find((candidate) => candidate.name === RECORD_DEDUCTIBLE.name);
  const parsed = Classification.safeParse(call?.input);
  if (!parsed.success) throw new ClassificationInvalid(statementId, 'the model did not call record_deductible with a list of ids');
  const known = new Set(rows.map((row) => row.id));
  const unknown = parsed.data.transactionIds.filter((id) => !known.has(id));
  if (unknown.length > 0) throw new ClassificationInvalid(statementId, `${unknown.length} id(s) are not transactions of this statement`);
  return new Set(parsed.data.transactionIds);
};

const groupByStatement = (rows: readonly StatementTransaction[]): Map<string, StatementTransaction[]> => {
  const groups = new Map<string, StatementTransaction[]>();
  for (const row of rows) groups.set(row.statementId, [...(groups.get(row.statementId) ?? []), row]);
  return groups;
};

const findingsOf = (rows: readonly Transaction[], deductible: (row: Transaction) => boolean): DeductibleFindings => {
  const kept = rows.filter(deductible);
  return {
    currency: 'GBP',
    totalDeductiblePence: kept.reduce((sum, row) => sum + row.amountPence, 0),
    transactions: rows.length,
    deductibleTransactions: kept.length,
  };
};

// ---------------------------------------------------------------- the kinds

/**
 * The statements overlapping a range, each as one batch (source `stmt-2025-06`).
 *
 * @example
 * const rows = await ctx.tools.statements(); // Q2: 18 rows from stmt-2025-04..06, the last on 2025-06-27
 */
export const statementsSource = timeSeriesSource<StatementTransaction>({
  description: 'Monthly bank statements of 2025',
  dateField: 'postedDate',
  idField: 'id',
  load: async (range) =>
    statements
      .filter((statement) => meets(statement.opens, statement.closes, range))
      .map((statement) => ({ source: statement.id, rows: statement.transactions.map((row) => ({ ...row, statementId: statement.id })) })),
});

/**
 * Every transaction of the year, in one feed (source `transaction-feed`).
 *
 * @example
 * await ctx.tools.feed({ from: '2025-06-28', toExclusive: '2025-07-01' }); // [] from source transaction-feed
 */
export const transactionFeedSource = timeSeriesSource<Transaction>({
  description: "The bank's transaction feed for 2025",
  dateField: 'postedDate',
  idField: 'id',
  load: async (range) => [
    {
      source: 'transaction-feed',
      rows: statements.flatMap((statement) => statement.transactions).filter((row) => meets(row.postedDate, row.postedDate, range)),
    },
  ],
});

const NoInput = z.strictObject({});

/**
 * The calendar months of a date range, each clipped to it (`2025-04-01..2025-07-01` → April, May,
 * June); a range of instants is read whole.
 *
 * @example
 * monthsOf({ from: '2025-04-15', toExclusive: '2025-06-01' }) // [{ from: '2025-04-15', toExclusive: '2025-05-01' }, { from: '2025-05-01', toExclusive: '2025-06-01' }]
 */
export const monthsOf = (range: TimeRangeRequest): TimeRangeRequest[] => {
  if (range.from.length !== 10 || range.toExclusive.length !== 10) return [range];
  const months: TimeRangeRequest[] = [];
  let from = range.from;
  while (from < range.toExclusive) {
    const [year, month] = [Number(from.slice(0, 4)), Number(from.slice(5, 7))];
    const next = month === 12 ? `${year + 1}-01-01` : `${year}-${String(month + 1).padStart(2, '0')}-01`;
    const toExclusive = next < range.toExclusive ? next : range.toExclusive;
    months.push({ from, toExclusive });
    from = toExclusive;
  }
  return months;
};

const addFindings = (a: DeductibleFindings, b: DeductibleFindings): DeductibleFindings => ({
  currency: 'GBP',
  totalDeductiblePence: a.totalDeductiblePence + b.totalDeductiblePence,
  transactions: a.transactions + b.transactions,
  deductibleTransactions: a.deductibleTransactions + b.deductibleTransactions,
});

const NO_FINDINGS: DeductibleFindings = { currency: 'GBP', totalDeductiblePence: 0, transactions: 0, deductibleTransactions: 0 };

/** What {@link readMonthByMonth} needs of a worker's context: the tax kind's, or a test variant's. */
export interface MonthByMonthContext {
  readonly assignment: { readonly scope: TimeRangeRequest };
  readonly tools: { readonly statements: (range?: TimeRangeRequest) => Promise<readonly StatementTransaction[]> };
  readonly model: WorkerModel;
  checkpoint(findings: DeductibleFindings): void;
  readonly resumeFrom?: Readonly<{ covered: readonly Scope[]; findings: unknown }>;
}

/**
 * The tax kind's reading loop: the months of the assigned range in order, one model call per
 * statement, findings reported after each month (`ctx.checkpoint`); on a resumed generation it
 * starts after the months the checkpoint covered. `beforeMonth` runs before each month is read
 * (the fault suite's variant slows one down or stops there).
 *
 * @example
 * run: (ctx) => readMonthByMonth(ctx)
 */
export const readMonthByMonth = async (
  ctx: MonthByMonthContext,
  beforeMonth: (month: TimeRangeRequest, sofar: DeductibleFindings) => Promise<void> = async () => undefined,
): Promise<DeductibleFindings> => {
  const resumed = ctx.resumeFrom;
  // The checkpoint covers whole months from the start of the range: go on after them.
  const resumeAt = resumed?.covered
    .flatMap((scope) => ('toExclusive' in scope ? [scope.toExclusive] : []))
    .sort()
    .at(-1);
  let findings: DeductibleFindings = resumed === undefined ? NO_FINDINGS : DeductibleFindings.parse(resumed.findings);
  for (const month of monthsOf(ctx.assignment.scope)) {
    if (resumeAt !== undefined && month.toExclusive <= resumeAt) continue;
    await beforeMonth(month, findings);
    const rows = await ctx.tools.statements(month);
    const deductible = new Set<string>();
    for (const [statementId, group] of groupByStatement(rows)) {
      for (const id of await classifyStatement(ctx.model, statementId, group)) deductible.add(id);
    }
    findings = addFindings(
      findings,
      findingsOf(rows, (row) => deductible.has(row.id)),
    );
    ctx.checkpoint(findings);
  }
  return findings;
};

/**
 * The definition shared by the tax kind and the fault suite's variant of it (the same sources,
 * findings, merge and alternate source, so their findings add up in one answer).
 */
export const TAX_STATEMENTS_PARTS = {
  dimension: 'time',
  label: 'monthly statements',
  recordNoun: 'transactions',
  alternateSource: KIND_NAMES.transactionFeed,
  output: DeductibleFindings,
  sources: { statements: statementsSource },
  offlineScripts: { 'classify-deductible': classifyDeductibleOffline },
  merge: sumDeductible,
  summarize: describeDeductible,
  partialFindings: true,
} as const;

/**
 * Reads the statements of the assigned range month by month and asks the model, once per
 * statement, which transactions are deductible: a quarter costs three calls. After each month it
 * reports its findings so far (`ctx.checkpoint`), so a deadline that cuts it off keeps the months
 * it read; a redelivery after a crash starts after the months its checkpoint covered.
 *
 * @example
 * // Q2 → observed 2025-04-01..2025-06-27, 18 transactions, 3 model calls, 23,499 pence deductible
 */
export const taxStatements = defineWorker({
  ...TAX_STATEMENTS_PARTS,
  kind: KIND_NAMES.taxStatements,
  input: NoInput,
  run: (ctx) => readMonthByMonth(ctx),
});

/**
 * Reads the feed for the assigned range and applies the category rule directly: no model calls.
 *
 * @example
 * // 2025-06-28..2025-07-01 → empty, sourcesReached 1: the June gap holds no transactions
 */
export const transactionFeed = defineWorker({
  kind: KIND_NAMES.transactionFeed,
  dimension: 'time',
  label: 'transaction feed',
  recordNoun: 'transactions',
  input: NoInput,
  output: DeductibleFindings,
  sources: { feed: transactionFeedSource },
  merge: sumDeductible,
  summarize: describeDeductible,
  run: async (ctx) => findingsOf(await ctx.tools.feed(), isDeductible),
});
