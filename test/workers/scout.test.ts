import { describe, expect, it } from 'vitest';
import { createRegistry } from '../../lib/workers';
import { createReferenceKinds, referenceRegistry, searchAccount } from '../../examples/app';
import { runOffline } from '../../lib/testing';

const scoutRun = (worker: string, ids: string[], options: { deadlineInMs?: number; registry?: typeof referenceRegistry } = {}) =>
  runOffline({
    registry: options.registry ?? referenceRegistry,
    worker,
    subtaskId: 'C',
    questionIds: ['q3'],
    assigned: { ids },
    deadlineInMs: options.deadlineInMs ?? 60_000,
    budget: { modelCalls: 1, estimatedCostPerCall: 7 },
  });
const scout = async (...args: Parameters<typeof scoutRun>) => (await scoutRun(...args)).outcome;

describe('scout-crm, the slow worker', () => {
  it('times out on an account with 450 notes when the deadline is shorter than the search', async () => {
    // 450 notes at 2 ms each is 900 ms of search against a 100 ms deadline.
    const registry = createRegistry(createReferenceKinds({ crmMsPerNote: 2 }));
    const { subtask, outcome, reported, coverage } = await scoutRun('scout-crm', ['crm:vantage'], { deadlineInMs: 100, registry });
    // The worker stopped at the deadline having read nothing; the pipeline records the seal.
    expect(reported).toMatchObject({ state: 'timed_out', observed: { ids: [], recordCount: 0 }, sourcesReached: 0 });
    expect(outcome).toEqual({
      subtaskId: 'C',
      state: 'timed_out',
      observed: null,
      sources: [],
      sourcesReached: 0,
      // The plan-search call was reserved before the search started, and stays charged.
      usage: { modelCalls: 1, estimatedCost: 7 },
      reason: `deadline ${subtask.deadline} passed; claimed by generation 1 (worker offline) but no result arrived`,
      refusals: [],
    });
    expect(coverage).toMatchObject({ complete: false, degradedReason: ['C:timed_out'] });
  });

  it('answers for an account with 12 notes inside the deadline', async () => {
    const registry = createRegistry(createReferenceKinds({ crmMsPerNote: 2 }));
    const outcome = await scout('scout-crm', ['crm:initech'], { registry });
    expect(outcome).toMatchObject({
      state: 'ok',
      observed: { ids: ['crm:initech'], recordCount: 1 },
      findings: {
        findings: [
          { questionIds: ['q3'], source: 'crm:initech', statement: 'Signed the two-year price lock at the new enterprise floor.', evidence: ['note-9'] },
        ],
      },
    });
  });

  it('stops searching as soon as the signal fires', async () => {
    const controller = new AbortController();
    const search = searchAccount('crm:vantage', { signal: controller.signal, msPerNote: 60 });
    controller.abort(new Error('deadline'));
    await expect(search).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('the other scouts', () => {
  it('reports each finding against the assigned question with its evidence', async () => {
    const outcome = await scout('scout-pricing', ['web:pricing']);
    expect(outcome).toMatchObject({
      state: 'ok',
      observed: { ids: ['web:pricing'], recordCount: 2 },
      findings: {
        findings: [
          {
            questionIds: ['q3'],
            source: 'web:pricing',
            statement: 'Vantage moved its enterprise floor from $48,000 to $60,000 a year.',
            evidence: ['pricing-2025-05-02-a'],
          },
          { questionIds: ['q3'], source: 'web:pricing', statement: 'The Team plan stays at $30 per seat per month.', evidence: ['pricing-2025-05-02-b'] },
        ],
      },
    });
  });

  it('reports a source outside its family as not reached: empty with sourcesReached 0', async () => {
    const outcome = await scout('scout-news', ['web:pricing']);
    expect(outcome).toMatchObject({ state: 'empty', sourcesReached: 0, reason: 'no source was reachable' });
  });

  it('merges the findings of every scout kind by question', async () => {
    const merged = referenceRegistry.merge([
      {
        worker: 'scout-pricing',
        findings: { findings: [{ questionIds: ['q1'], source: 'web:pricing', statement: 'Floor moved to $60,000.', evidence: ['p1'] }] },
      },
      {
        worker: 'scout-reviews',
        findings: { findings: [{ questionIds: ['q2'], source: 'reviews:g2', statement: 'Renewal price complaints.', evidence: ['g1'] }] },
      },
      {
        worker: 'scout-news',
        findings: { findings: [{ questionIds: ['q1', 'q2'], source: 'news:vantage', statement: 'Series D, enterprise push.', evidence: ['n1'] }] },
      },
    ]);
    expect(merged.result).toEqual({
      findings: {
        q1: [
          { source: 'web:pricing', statement: 'Floor moved to $60,000.', evidence: ['p1'] },
          { source: 'news:vantage', statement: 'Series D, enterprise push.', evidence: ['n1'] },
        ],
        q2: [
          { source: 'reviews:g2', statement: 'Renewal price complaints.', evidence: ['g1'] },
          { source: 'news:vantage', statement: 'Series D, enterprise push.', evidence: ['n1'] },
        ],
      },
    });
    expect(merged.text).toBe('Findings on 2 questions (q1, q2) from 3 sources.');
  });
});
