import { describe, expect, it } from 'vitest';
import { BAR_LEGEND, coverageBar } from '../../lib/cli/coverage-bar';
import { formatRun } from '../../lib/cli/run-output';
import { scoutRun, taxRun } from '../web/fixtures';

describe('the coverage bar of `tessera run`', () => {
  it('draws tax 2025 with 28–30 June as one re-checked column: 19 read columns before it, 20 after', () => {
    // 40 columns of 365/40 = 9.125 days. The gap is days 178 to 181: 178/9.125 = 19.5 and
    // 181/9.125 = 19.8, so it lies inside column 19 (0-based) and touches no other.
    expect(coverageBar(taxRun())).toBe(`Jan ${'█'.repeat(19)}▒${'█'.repeat(20)} Dec`);
  });

  it('draws an unread gap as ░ and a run without a time universe as no bar', () => {
    const run = taxRun();
    const gap = { ...run.answer!.coverage.gaps[0]!, from: '2025-01-01', toExclusive: '2025-04-01', kind: 'unread' as const, status: 'unchecked' as const };
    // January–March is days 0 to 90: columns 0 to 9 (90/9.125 = 9.86).
    const bar = coverageBar({ ...run, answer: { ...run.answer!, coverage: { ...run.answer!.coverage, gaps: [gap] } } });
    expect(bar).toBe(`Jan ${'░'.repeat(10)}${'█'.repeat(30)} Dec`);
    expect(coverageBar(scoutRun())).toBeUndefined();
  });

  it('ends the human-readable run with the bar and its legend', () => {
    const lines = formatRun(taxRun()).split('\n');
    expect(lines.slice(-2)).toEqual([`Timeline  Jan ${'█'.repeat(19)}▒${'█'.repeat(20)} Dec`, `          ${BAR_LEGEND}`]);
    expect(BAR_LEGEND).toBe('█ read   ▒ gap, re-checked   ░ gap, unread or unchecked');
  });
});
