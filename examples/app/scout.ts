import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { TimePoint } from '../../lib/contract';
import {
  type DefinedWorker,
  defineWorker,
  type FindingItem,
  keyedSource,
  type LoadOptions,
  type OfflineScript,
  promptJson,
  SourceUnavailable,
  userText,
  type WorkerModel,
} from '../../lib/workers';
import scoutFile from './fixtures/scout-sources.json' with { type: 'json' };
import { KIND_NAMES } from './kind-names';

/**
 * Scout: five research workers on the ids dimension, one source id each (pricing
 * page, packaging page, review site, CRM notes, news). The CRM search is slow in proportion to
 * the notes on the account, like the endpoint whose tail ran past its deadline on accounts with
 * more than about 400 notes.
 */

const ScoutRecord = z.object({ id: z.string().min(1), date: TimePoint, text: z.string().min(1) });
/**
 * @example
 * const record: ScoutRecord = { id: 'note-118', date: '2025-05-20', text: 'Acme renewal …' };
 */
export type ScoutRecord = z.infer<typeof ScoutRecord>;

const ScoutSources = z.record(
  z.string(),
  z.object({
    /** Notes on the account that a CRM search has to scan (only CRM accounts have it). */
    noteCount: z.int().min(0).optional(),
    records: z.array(ScoutRecord),
  }),
);

/** The committed research sources, parsed once at import. */
const sources = ScoutSources.parse(scoutFile);

const Finding = z.object({
  questionIds: z.array(z.string()),
  source: z.string().min(1),
  statement: z.string().min(1),
  /** Ids of the records the statement rests on. */
  evidence: z.array(z.string()).min(1),
});

/**
 * Findings of every scout kind: one schema, so they merge into one answer.
 *
 * @example
 * ScoutFindings.parse({ findings: [{ questionIds: ['q3'], source: 'crm:vantage', statement: '…', evidence: ['note-118'] }] });
 */
export const ScoutFindings = z.object({ findings: z.array(Finding) });
export type ScoutFindings = z.infer<typeof ScoutFindings>;

/** Questions a finding was not assigned to are collected under this key. */
const UNASSIGNED = 'unassigned';

const collectByQuestion = (all: readonly ScoutFindings[]) => {
  const byQuestion: Record<string, { source: string; statement: string; evidence: string[] }[]> = {};
  for (const { questionIds, source, statement, evidence } of all.flatMap((item) => item.findings)) {
    for (const question of questionIds.length > 0 ? questionIds : [UNASSIGNED]) {
      (byQuestion[question] ??= []).push({ source, statement, evidence });
    }
  }
  return { findings: byQuestion };
};

const describeFindings = ({ findings }: ReturnType<typeof collectByQuestion>): string => {
  const questions = Object.keys(findings).sort();
  const reached = new Set(Object.values(findings).flatMap((items) => items.map((item) => item.source)));
  return `Findings on ${questions.length} question${questions.length === 1 ? '' : 's'} (${questions.join(', ')}) from ${reached.size} source${reached.size === 1 ? '' : 's'}.`;
};

/** Each record's statement is one finding synthesis cites (A#1, A#2, …), resting on that record. Shared by every scout kind. */
const scoutItems = ({ findings }: ScoutFindings) => findings.map((finding) => ({ statement: finding.statement, evidence: finding.evidence, content: finding }));

/**
 * What a scout finding claims: the enterprise floor a statement names (its last dollar figure), so
 * two sources that name different floors are a conflict the synthesis must address. A real kind
 * would read the figure from structured data; the example's sources are sentences.
 */
const scoutClaims = (item: FindingItem) => {
  const statement = item.statement ?? '';
  if (!/enterprise floor/i.test(statement)) return [];
  const figures = [...statement.matchAll(/\$([\d,]+)/g)].map((m) => Number(m[1]!.replaceAll(',', '')));
  return figures.length === 0 ? [] : [{ key: 'vantage.enterprise.floor', value: figures.at(-1)! }];
};

/**
 * The simulated CRM search: it scans every note on the account, so it takes `noteCount ×
 * msPerNote`, and it stops at once when the signal fires.
 *
 * @example
 * await searchAccount('crm:vantage', { signal, msPerNote: 60 }); // 450 notes: 27 s unless aborted sooner
 */
export const searchAccount = async (accountId: string, options: LoadOptions & { readonly msPerNote: number }): Promise<readonly ScoutRecord[]> => {
  const account = sources[accountId];
  if (!account) throw new SourceUnavailable(accountId);
  await sleep((account.noteCount ?? 0) * options.msPerNote, undefined, { signal: options.signal });
  return account.records;
};

interface ScoutSpec {
  readonly kind: string;
  readonly label: string;
  readonly recordNoun: string;
  /** The source ids this kind can read start with this (`web:pricing`, `crm:`). */
  readonly family: string;
  /** Reads one source; the default returns its records at once. */
  readonly read?: (sourceId: string, options: LoadOptions) => Promise<readonly ScoutRecord[]>;
}

const readAtOnce = async (sourceId: string): Promise<readonly ScoutRecord[]> => {
  const source = sources[sourceId];
  if (!source) throw new SourceUnavailable(sourceId);
  return source.records;
};

const PLAN_SYSTEM = 'You plan research. Given a source and the questions it should answer, reply with the search terms to use, one line.';

/**
 * The offline model's search plan: the question ids themselves, so examples stay deterministic.
 *
 * @example
 * planSearchOffline(request, turn) // { text: 'q3' }
 */
export const planSearchOffline: OfflineScript = (request) => {
  const parsed = z.object({ questionIds: z.array(z.string()) }).safeParse(promptJson(request));
  return { text: parsed.success ? parsed.data.questionIds.join(' ') : '' };
};

/**
 * One model call per source, before reading it: what to search for. A research worker spends
 * its allowance up front, so a run cancelled during a slow search still shows that usage.
 */
const planSearch = (model: WorkerModel, sourceId: string, questionIds: readonly string[]) =>
  model.call({ task: 'plan-search', system: PLAN_SYSTEM, messages: [userText(JSON.stringify({ sourceId, questionIds }))] });

const scoutKind = (spec: ScoutSpec): DefinedWorker =>
  defineWorker({
    kind: spec.kind,
    dimension: 'ids',
    label: spec.label,
    recordNoun: spec.recordNoun,
    input: z.strictObject({}),
    output: ScoutFindings,
    sources: {
      read_source: keyedSource({
        description: `Read one assigned ${spec.label} source`,
        args: z.strictObject({ sourceId: z.string().min(1) }),
        idOf: (args) => args.sourceId,
        load: async ({ sourceId }, options) => {
          if (!sourceId.startsWith(spec.family)) throw new SourceUnavailable(sourceId);
          return { source: sourceId, rows: await (spec.read ?? readAtOnce)(sourceId, options) };
        },
      }),
    },
    merge: collectByQuestion,
    summarize: describeFindings,
    items: scoutItems,
    claims: scoutClaims,
    offlineScripts: { 'plan-search': planSearchOffline },
    run: async (ctx) => {
      const findings: z.input<typeof Finding>[] = [];
      for (const sourceId of ctx.assignment.scope.ids) {
        let records: readonly ScoutRecord[];
        await planSearch(ctx.model, sourceId, ctx.assignment.questionIds);
        try {
          records = (await ctx.tools.read_source({ sourceId })).map((row) => ScoutRecord.parse(row));
        } catch (error) {
          // An unreachable source is not an error of the worker: the outcome shows it as not reached.
          if (error instanceof SourceUnavailable) continue;
          throw error;
        }
        findings.push(
          ...records.map((record) => ({ questionIds: [...ctx.assignment.questionIds], source: sourceId, statement: record.text, evidence: [record.id] })),
        );
      }
      return { findings };
    },
  });

/**
 * @example
 * createScoutKinds({ crmMsPerNote: 2 }); // 450 notes: 900 ms
 */
export interface ScoutOptions {
  /**
   * Simulated CRM search time per note on the account. At 60 ms, an account with 450 notes takes
   * 27 s, past Scout's 25 s deadline, while one with 400 takes 24 s. @default 60
   */
  readonly crmMsPerNote?: number;
}

/**
 * The five Scout kinds.
 *
 * @example
 * const [pricing, packaging, reviews, crm, news] = createScoutKinds({ crmMsPerNote: 1 });
 */
export const createScoutKinds = (options: ScoutOptions = {}): DefinedWorker[] => {
  const msPerNote = options.crmMsPerNote ?? 60;
  return [
    scoutKind({ kind: KIND_NAMES.scoutPricing, label: 'pricing pages', recordNoun: 'facts', family: 'web:pricing' }),
    scoutKind({ kind: KIND_NAMES.scoutPackaging, label: 'packaging pages', recordNoun: 'facts', family: 'web:packaging' }),
    scoutKind({ kind: KIND_NAMES.scoutReviews, label: 'review sites', recordNoun: 'reviews', family: 'reviews:' }),
    scoutKind({
      kind: KIND_NAMES.scoutCrm,
      label: 'CRM notes',
      recordNoun: 'notes',
      family: 'crm:',
      read: (accountId, { signal }) => searchAccount(accountId, { signal, msPerNote }),
    }),
    scoutKind({ kind: KIND_NAMES.scoutNews, label: 'news', recordNoun: 'articles', family: 'news:' }),
  ];
};
