import { describe, expect, it } from 'vitest';
import type { RunRequestInput } from '../../lib/contract';
import { example, runToEnd, subtask } from './target';

const withQuote = (patch: Record<string, unknown>): RunRequestInput => {
  const request = example('catering');
  const [quote] = request.subtasks ?? [];
  return { ...request, subtasks: [{ ...quote!, ...patch }] };
};

describe('the catering example: one bounded catering delegation', () => {
  it('quotes 41 guests of vanilla as 5 tubs for 2,500 pence, a draft with nothing reserved', async () => {
    const run = await runToEnd(example('catering'));

    expect(run.status).toBe('succeeded');
    expect(run.answer?.result).toEqual({
      quotes: [{ sku: 'SKU-VANILLA', guests: 41, portionsPerTub: 10, tubs: 5, totalPence: 2500, currency: 'GBP', status: 'DRAFT_QUOTE', stockReserved: false }],
    });
    // The direct function agrees and needed no model calls; the worker used two (tool, then finish).
    expect(subtask(run, 'Q')).toMatchObject({
      state: 'ok',
      baseline: { matched: true, workerModelCalls: 2, baselineModelCalls: 0 },
      usage: { modelCalls: 2, estimatedCost: 14 },
    });
  });

  it('refuses a worker that asks for another guest count, and records the refusal', async () => {
    const run = await runToEnd(withQuote({ model: 'offline:broaden' }));

    const quote = subtask(run, 'Q');
    expect(quote.refusals).toEqual([expect.objectContaining({ tool: 'catering_quote' })]);
    expect(quote.refusals[0]?.requested).toContain('42');
    expect(quote.state).not.toBe('ok');
  });

  it('plans within an allowance of one model call: the tool answers, the second call never happens', async () => {
    const run = await runToEnd(withQuote({ budget: { modelCalls: 1, estimatedCostPerCall: 7 } }));

    expect(subtask(run, 'Q')).toMatchObject({ state: 'ok', usage: { modelCalls: 1, estimatedCost: 7 }, baseline: { matched: true, workerModelCalls: 1 } });
    expect(run.answer?.result).toMatchObject({ quotes: [{ tubs: 5, totalPence: 2500 }] });
  });
});
