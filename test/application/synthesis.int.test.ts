import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AnswerSynthesis, type DispatchedSubtask, type RunRequestInput, type SynthesisOutput } from '../../lib/contract';
import { reconcileRun } from '../../lib/application/close-run';
import type { ReconcileDeps } from '../../lib/application/deps';
import { toRunResource, type Ledger } from '../../lib/ledger';
import { createLogger, createMetrics } from '../../lib/runtime/lambda';
import {
  createModelProvider,
  createRegistry,
  defineSynthesizer,
  defineWorker,
  faithfulOutput,
  parseModelConfig,
  synthesisPromptOf,
  SYNTHESIS_TOOL,
  type OfflineScript,
} from '../../lib/workers';
import { uniqueName } from '../support/aws';
import { ledgerTestTable, T0 } from '../ledger/support';

/**
 * Synthesis on the closing path, against DynamoDB Local: a Scout-like run of five subtasks, one
 * per question. A read pricing (A#1 "Pro is $49 a seat", price 49; A#2 "Annual billing only"),
 * B packaging (B#1), C the CRM and timed out (q3 missing), D reviews (D#1), E news (E#1 "Pro is
 * now $59", price 59): A#1 and E#1 conflict on vantage.pro.price. Synthesis may make 2 calls at 3.
 */
const suite = ledgerTestTable('app-synthesis');

const Note = z.object({ text: z.string(), evidence: z.array(z.string()), price: z.number().optional() });
const Notes = z.object({ notes: z.array(Note) });

const notesKind = (synthesizer: OfflineScript | undefined, maxFindings?: number) =>
  defineWorker({
    kind: 'notes',
    dimension: 'ids',
    label: 'notes',
    recordNoun: 'notes',
    input: z.strictObject({}),
    output: Notes,
    sources: {},
    merge: (all) => ({ notes: all.flatMap((n) => n.notes.map((note) => note.text)) }),
    summarize: (result) => `${(result['notes'] as unknown[]).length} notes.`,
    items: (findings) => findings.notes.map((note) => ({ statement: note.text, evidence: note.evidence, content: note })),
    claims: (item) => {
      const note = Note.parse(item.content);
      return note.price === undefined ? [] : [{ key: 'vantage.pro.price', value: note.price }];
    },
    ...(synthesizer === undefined ? {} : { synthesizer: defineSynthesizer({ offlineScript: synthesizer, inputBudget: { maxFindings } }) }),
    run: async () => ({ notes: [] }),
  });

const NOTES: Record<string, z.input<typeof Notes>> = {
  A: {
    notes: [
      { text: 'Pro is $49 a seat.', evidence: ['pricing-1'], price: 49 },
      { text: 'Annual billing only.', evidence: ['pricing-2'] },
    ],
  },
  B: { notes: [{ text: 'SSO moved to Enterprise.', evidence: ['pack-1'] }] },
  D: { notes: [{ text: 'Reviewers like the API.', evidence: ['g2-7'] }] },
  E: { notes: [{ text: 'Pro is now $59.', evidence: ['news-3'], price: 59 }] },
};
const IDS = ['A', 'B', 'C', 'D', 'E'];

const request = (overrides: Partial<RunRequestInput> = {}): RunRequestInput => ({
  goal: 'What changed at Vantage?',
  universe: { dimension: 'ids', ids: IDS.map((id) => `src:${id}`) },
  questions: IDS.map((_, i) => ({ id: `q${i + 1}` })),
  subtasks: IDS.map((id, i) => ({
    id,
    worker: 'notes',
    questionIds: [`q${i + 1}`],
    scope: { ids: [`src:${id}`] },
    deadlineSeconds: 60,
    budget: { modelCalls: 4, estimatedCostPerCall: 3 },
  })),
  policy: { maxRounds: 1 },
  budget: { modelCalls: 30, costLimit: 100 },
  synthesis: { budget: { modelCalls: 2, estimatedCostPerCall: 3 } },
  ...overrides,
});

const dispatchedOf = (id: string, i: number): DispatchedSubtask => ({
  id,
  worker: 'notes',
  round: 1,
  questionIds: [`q${i + 1}`],
  required: false,
  assigned: { ids: [`src:${id}`] },
  deadline: '2040-06-01T12:01:00.000Z',
  deadlineSeconds: 60,
  budget: { modelCalls: 4, estimatedCostPerCall: 3 },
});

/** The run worked: A, B, D and E ok with their notes, C sealed timed_out at its deadline. `spend` calls A reserves first. */
const workedRun = async (ledger: Ledger, body: RunRequestInput, spend = 0) => {
  suite.clock.set(T0);
  const tenantId = uniqueName('tenant');
  const runId = uniqueName('run');
  await ledger.createRun({ tenantId, runId, request: body });
  await ledger.appendRound({ tenantId, runId, round: 1, subtasks: IDS.map(dispatchedOf) });
  for (const id of ['A', 'B', 'D', 'E']) {
    const claim = await ledger.claimSubtask({ tenantId, runId, subtaskId: id, workerId: `w-${id}`, leaseMs: 30_000 });
    if (id === 'A') for (let i = 0; i < spend; i += 1) await ledger.reserveBudget(claim);
    const findings = NOTES[id]!;
    await ledger.recordOutcome(claim, { subtaskId: id, state: 'ok', observed: { ids: [`src:${id}`], recordCount: findings.notes.length }, findings });
  }
  suite.clock.advance(61_000);
  await ledger.sealTimedOut({ tenantId, runId, subtaskId: 'C' });
  return { tenantId, runId };
};

const depsWith = (script: OfflineScript | undefined, ledger: Ledger = suite.ledger, maxFindings?: number): ReconcileDeps => {
  const registry = createRegistry([notesKind(script, maxFindings)]);
  return {
    ledger,
    now: suite.clock.now,
    registry,
    models: createModelProvider({ config: parseModelConfig({}) }),
    sources: registry.sources(),
    logger: createLogger('reconcile', { POWERTOOLS_LOG_LEVEL: 'ERROR' }),
    metrics: createMetrics({}),
  };
};

/** Closes the run and returns its resource. */
const close = async (script: OfflineScript | undefined, body: RunRequestInput = request(), spend = 0, maxFindings?: number) => {
  const run = await workedRun(suite.ledger, body, spend);
  expect(await reconcileRun(depsWith(script, suite.ledger, maxFindings))({ mode: 'reconcile', ...run, round: 1 })).toMatchObject({
    next: 'finish',
    status: 'succeeded',
  });
  const resource = toRunResource((await suite.ledger.getRun(run.tenantId, run.runId))!);
  return { ...run, resource, answer: resource.answer!, synthesis: AnswerSynthesis.parse(resource.answer!.synthesis) };
};

/** A script answering every call with `edit` applied to the faithful output. */
const scripted =
  (edit: (faithful: SynthesisOutput) => SynthesisOutput, repaired?: (faithful: SynthesisOutput) => SynthesisOutput): OfflineScript =>
  (req, { turn }) => {
    const faithful = faithfulOutput(synthesisPromptOf(req));
    const output = turn > 0 && repaired ? repaired(faithful) : edit(faithful);
    return { toolCalls: [{ id: `s-${turn}`, name: SYNTHESIS_TOOL, input: output }] };
  };
const same = (o: SynthesisOutput) => o;
const withoutCiting = (id: string) => (o: SynthesisOutput) => ({ ...o, claims: o.claims.filter((c) => !c.cites.includes(id)) });
const citingToo = (id: string) => (o: SynthesisOutput) => ({ ...o, claims: o.claims.map((c, i) => (i === 0 ? { ...c, cites: [...c.cites, id] } : c)) });
const ignoringConflicts = (o: SynthesisOutput) => ({
  ...o,
  claims: o.claims.filter((c) => !c.text.startsWith('The sources disagree')).map((c) => c),
});
const answeringQ3 = (o: SynthesisOutput) => ({
  ...o,
  claims: [...o.claims.filter((c) => c.kind !== 'gap'), { text: 'Acme and Globex mention Vantage.', cites: [], kind: 'finding' as const, questionIds: ['q3'] }],
});
const problemsOf = (synthesis: AnswerSynthesis) => synthesis.audit.problems.map(({ message: _m, ...rest }) => rest);

describe('a model synthesis on the closing path', () => {
  it('faithful: claims cite A, B, D and E, q3 is a gap claim, the conflict is cited on both sides; audited clean in one call', async () => {
    const { answer, synthesis, resource } = await close(scripted(same));
    expect(synthesis).toMatchObject({ by: 'model', attempts: 1, levels: 1, model: 'offline' });
    expect(synthesis.audit).toEqual({ clean: true, findings: 5, cited: 5, setAside: 0, problems: [] });
    expect(synthesis.claims.map((c) => [c.kind, c.cites])).toEqual([
      ['finding', ['A#1', 'E#1']],
      ['finding', ['A#1', 'A#2']],
      ['finding', ['B#1']],
      ['finding', ['D#1']],
      ['finding', ['E#1']],
      ['gap', []],
    ]);
    expect(synthesis.claims[5]).toMatchObject({ questionIds: ['q3'], text: 'q3 is missing: no finding answers it.' });
    expect(synthesis.findings.find((f) => f.id === 'E#1')).toEqual({
      id: 'E#1',
      subtaskId: 'E',
      questionIds: ['q5'],
      statement: 'Pro is now $59.',
      evidence: ['news-3'],
    });
    expect(answer.coverage).toMatchObject({ synthesisAuditedClean: true, complete: false, missingQuestions: ['q3'] });
    expect(answer.coverage.conflicts).toEqual([
      {
        key: 'vantage.pro.price',
        sides: [
          { value: 49, findings: [{ findingId: 'A#1', subtaskId: 'A', evidence: ['pricing-1'] }] },
          { value: 59, findings: [{ findingId: 'E#1', subtaskId: 'E', evidence: ['news-3'] }] },
        ],
      },
    ]);
    // The claims are the text, and tessera appends the coverage statement after them.
    expect(answer.text.startsWith('The sources disagree on vantage.pro.price: Pro is $49 a seat; Pro is now $59.')).toBe(true);
    expect(answer.text.endsWith(answer.coverage.statement)).toBe(true);
    // One synthesis call at 3, charged to the run (no subtask spent anything).
    expect(resource.usage).toEqual({ modelCalls: 1, estimatedCost: 3 });
  });

  it.each([
    [
      'drops a finding',
      withoutCiting('B#1'),
      [
        { code: 'dropped_finding', findingId: 'B#1' },
        { code: 'unaddressed_question', questionId: 'q2', findingIds: ['B#1'] },
      ],
    ],
    ['invents a citation', citingToo('A#9'), [{ code: 'unknown_citation', claim: 0, findingId: 'A#9' }]],
    [
      'cites another run’s finding',
      citingToo('run-elsewhere/B#1'),
      [{ code: 'foreign_citation', claim: 0, findingId: 'run-elsewhere/B#1', runId: 'run-elsewhere' }],
    ],
    ['ignores a conflict', ignoringConflicts, [{ code: 'unaddressed_conflict', key: 'vantage.pro.price', findingIds: ['A#1', 'E#1'] }]],
    [
      'answers a missing question from nothing',
      answeringQ3,
      [
        { code: 'uncited_claim', claim: 5 },
        { code: 'answers_missing_question', claim: 5, questionIds: ['q3'] },
      ],
    ],
  ])(
    '%s: caught with the ids named, repaired once without success, and the answer falls back to the merge with the audit kept',
    async (_name, edit, problems) => {
      const { answer, synthesis, resource } = await close(scripted(edit));
      expect(problemsOf(synthesis)).toEqual(problems);
      expect(synthesis).toMatchObject({ by: 'merge', attempts: 2, fallback: { reason: 'audit_failed' } });
      expect(answer.coverage.synthesisAuditedClean).toBe(false);
      expect(answer.result).toEqual({
        notes: ['Pro is $49 a seat.', 'Annual billing only.', 'SSO moved to Enterprise.', 'Reviewers like the API.', 'Pro is now $59.'],
      });
      expect(answer.text).toContain(`5 notes. Synthesis fell back to the merge: the audit found ${problems.length} problem(s) after the repair.`);
      // The first call and the repair, 3 each.
      expect(resource.usage).toEqual({ modelCalls: 2, estimatedCost: 6 });
    },
  );

  it('repair then clean: the first output drops B#1, the repair (fed the problems) cites it, and the synthesis stands', async () => {
    const { synthesis, answer } = await close(scripted(withoutCiting('B#1'), same));
    expect(synthesis).toMatchObject({ by: 'model', attempts: 2, audit: { clean: true, problems: [] } });
    expect(answer.coverage.synthesisAuditedClean).toBe(true);
  });

  it('the repair request carries the audit’s problems as the tool’s error result', async () => {
    const seen: unknown[] = [];
    const script: OfflineScript = (req, turn) => {
      const last = req.messages.at(-1)!.content[0]!;
      if (turn.turn > 0 && last.type === 'toolResult') seen.push(last.content);
      return scripted(withoutCiting('D#1'), same)(req, turn);
    };
    await close(script);
    expect(seen).toEqual([expect.objectContaining({ problems: [expect.objectContaining({ code: 'dropped_finding', findingId: 'D#1' }), expect.anything()] })]);
  });

  it('a run whose budget cannot cover synthesis gets the merge, and the answer says why', async () => {
    // A spent 4 calls at 3 of the run's 12 cost units: nothing is left for synthesis's 3.
    const { synthesis, answer, resource } = await close(scripted(same), request({ budget: { modelCalls: 30, costLimit: 12 } }), 4);
    expect(synthesis).toMatchObject({ by: 'merge', attempts: 0, fallback: { reason: 'budget' } });
    expect(synthesis.fallback?.message).toContain('run cost allowance exhausted: 0 left, 3 needed');
    expect(answer.text).toContain('Synthesis fell back to the merge: the budget could not pay for synthesis call 1');
    expect(answer.coverage.synthesisAuditedClean).toBe(false);
    expect(resource.usage).toEqual({ modelCalls: 4, estimatedCost: 12 });
  });

  it('a deployment without a synthesizer answers with the merge, saying so', async () => {
    const { synthesis } = await close(undefined);
    expect(synthesis).toMatchObject({ by: 'merge', fallback: { reason: 'no_synthesizer', message: 'the deployment declares no synthesizer' } });
  });

  it('a request without synthesis gets the merge alone, as before: no synthesis, no synthesisAuditedClean', async () => {
    const { synthesis: _s, ...plain } = request();
    const run = await workedRun(suite.ledger, plain);
    await reconcileRun(depsWith(scripted(same)))({ mode: 'reconcile', ...run, round: 1 });
    const answer = toRunResource((await suite.ledger.getRun(run.tenantId, run.runId))!).answer!;
    expect(answer.synthesis).toBeUndefined();
    expect(answer.coverage.synthesisAuditedClean).toBeUndefined();
    expect(answer.coverage.conflicts).toHaveLength(1);
  });
});

describe('a tree synthesis', () => {
  it('5 findings over an input of 4: two partials (A#1 A#2 B#1 D#1, and E#1), then the final; audited clean through both levels', async () => {
    const prompts: { part: unknown; ids: string[] }[] = [];
    const recording: OfflineScript = (req, turn) => {
      const prompt = synthesisPromptOf(req);
      prompts.push({ part: JSON.parse((req.messages[0]!.content[0] as { text: string }).text).part, ids: prompt.findings.map((f) => f.id) });
      return scripted(same)(req, turn);
    };
    const body = request({ synthesis: { budget: { modelCalls: 6, estimatedCostPerCall: 3 } } });
    const { synthesis, resource } = await close(recording, body, 0, 4);
    expect(prompts).toEqual([
      { part: { level: 1, group: 1, final: false }, ids: ['A#1', 'A#2', 'B#1', 'D#1'] },
      { part: { level: 1, group: 2, final: false }, ids: ['E#1'] },
      { part: { level: 2, group: 1, final: true }, ids: ['S1.1#1', 'S1.1#2', 'S1.1#3', 'S1.2#1'] },
    ]);
    expect(synthesis).toMatchObject({ by: 'model', levels: 2, attempts: 3, audit: { clean: true, findings: 5, cited: 5, problems: [] } });
    // The final's conflict claim cites the partials of both sides, expanded back to the run's own ids.
    expect(synthesis.claims[0]).toMatchObject({ cites: ['A#1', 'A#2', 'E#1'] });
    expect(synthesis.claims.at(-1)).toMatchObject({ kind: 'gap', questionIds: ['q3'] });
    expect(resource.usage).toEqual({ modelCalls: 3, estimatedCost: 9 });
  });
});

describe('idempotent under retries', () => {
  it('a Reconcile that crashed after storing the synthesis is retried: same answer, the call paid once', async () => {
    const run = await workedRun(suite.ledger, request());
    let calls = 0;
    const counting: OfflineScript = (req, turn) => {
      calls += 1;
      return scripted(same)(req, turn);
    };
    const crashing: Ledger = {
      ...suite.ledger,
      finishRun: () => Promise.reject(new Error('the function timed out')),
    };
    await expect(reconcileRun(depsWith(counting, crashing))({ mode: 'reconcile', ...run, round: 1 })).rejects.toThrow('the function timed out');
    await reconcileRun(depsWith(counting))({ mode: 'reconcile', ...run, round: 1 });
    const resource = toRunResource((await suite.ledger.getRun(run.tenantId, run.runId))!);
    expect(calls).toBe(1);
    expect(resource.usage).toEqual({ modelCalls: 1, estimatedCost: 3 });
    expect(resource.answer?.synthesis).toEqual(await suite.ledger.readSynthesis({ ...run, round: 1 }));
  });

  it('a call reserved by an earlier attempt is not charged again; a call past the synthesis allowance is refused', async () => {
    const run = await workedRun(suite.ledger, request());
    const call = { ...run, round: 1, call: 1, estimatedCostPerCall: 3, modelCalls: 2 };
    expect(await suite.ledger.reserveSynthesisCall(call)).toEqual({ charged: true });
    expect(await suite.ledger.reserveSynthesisCall(call)).toEqual({ charged: false });
    await expect(suite.ledger.reserveSynthesisCall({ ...call, call: 3 })).rejects.toMatchObject({ name: 'BudgetExhausted', limit: 'synthesis' });
    expect(toRunResource((await suite.ledger.getRun(run.tenantId, run.runId))!).usage).toEqual({ modelCalls: 1, estimatedCost: 3 });
  });

  it('the first stored synthesis wins', async () => {
    const run = await workedRun(suite.ledger, request());
    const { synthesis } = await close(scripted(same));
    const ref = { ...run, round: 1 };
    const first = await suite.ledger.recordSynthesis(ref, synthesis);
    const second = await suite.ledger.recordSynthesis(ref, { ...synthesis, attempts: 7 });
    expect(second).toEqual(first);
  });
});
