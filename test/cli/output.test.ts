import { describe, expect, it } from 'vitest';
import { RunResource } from '../../lib/contract';
import { formatCoverage, formatProblems } from '../../lib/cli/output';
import { formatRun, progressLine } from '../../lib/cli/run-output';

const ESC = '\u001b';

/** A finished run whose stored text carries terminal escapes (an older record, or a worker's own reason). */
const hostileRun = RunResource.parse({
  runId: 'run-1',
  status: 'succeeded',
  goal: `goal ${ESC}[2J`,
  createdAt: '2040-06-01T12:00:00.000Z',
  updatedAt: '2040-06-01T12:01:00.000Z',
  universe: { dimension: 'time', from: '2025-01-01', toExclusive: '2025-04-01' },
  round: 1,
  progress: { dispatched: 1, terminal: 1, byState: { ok: 1 } },
  budget: { modelCalls: 4, costLimit: 28 },
  usage: { modelCalls: 1, estimatedCost: 7 },
  subtasks: [
    {
      id: 'A',
      worker: 'tax-statements',
      round: 1,
      questionIds: [],
      required: false,
      assigned: { from: '2025-01-01', toExclusive: '2025-04-01' },
      state: 'ok',
      observed: { minDate: '2025-01-01', maxDate: '2025-03-31', recordCount: 3 },
      sources: [],
      sourcesReached: 1,
      usage: { modelCalls: 1, estimatedCost: 7 },
      reason: `done\r${ESC}[31mFAILED\u009b`,
      refusals: [],
    },
  ],
  answer: {
    text: `Total ${ESC}]8;;http://evil${ESC}\\click${ESC}]8;;${ESC}\\`,
    result: { note: `\u202eevil` },
    coverage: {
      complete: true,
      missingQuestions: [],
      degradedReason: [],
      partitions: 1,
      overlaps: [],
      gaps: [],
      problems: [],
      statement: `Coverage: ${ESC}[8mhidden`,
    },
  },
  error: { code: 'X', message: `bad${ESC}[0m` },
});

const hasControl = (text: string): boolean => /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/.test(text);

describe('human-readable output escapes control characters', () => {
  it('formatRun shows stored text with visible escapes and keeps only its own line breaks', () => {
    const text = formatRun(hostileRun);
    expect(hasControl(text)).toBe(false);
    const lines = text.split('\n');
    expect(lines[1]).toBe('Error     X: bad\\u001b[0m');
    expect(lines[2]).toBe('Answer    Total \\u001b]8;;http://evil\\u001b\\click\\u001b]8;;\\u001b\\');
    expect(lines[3]).toBe('Result    {"note":"\\u202eevil"}');
    expect(lines[4]).toBe('Coverage  Coverage: \\u001b[8mhidden');
    expect(lines.at(-3)).toMatch(/ok\s+2025-01-01\.\.2025-03-31 \(3\)\s+1 call\/7\s+done\\u000d\\u001b\[31mFAILED\\u009b$/);
  });

  it('progress, problems and coverage reports are escaped too', () => {
    expect(progressLine({ ...hostileRun, progress: { dispatched: 1, terminal: 0, byState: { [`ok${ESC}`]: 1 } } })).toBe(
      'round 1 · 0/1 subtasks ended · ok\\u001b 1',
    );
    expect(formatProblems(`f${ESC}.json`, [{ code: 'invalid_request', path: 'goal', message: `bad ${ESC}[2J` }])).toBe(
      'f\\u001b.json (1 problem):\n  goal  invalid_request  bad \\u001b[2J',
    );
    const coverage = hostileRun.answer?.coverage;
    expect(coverage && formatCoverage(hostileRun.universe, { ...coverage, degradedReason: [`A:${ESC}x`] }).split('\n')).toEqual([
      'Coverage: \\u001b[8mhidden',
      '',
      'complete: yes',
      'partitions: 1',
      'missing questions: none',
      'degraded: A:\\u001bx',
    ]);
  });
});

describe('formatRun with a synthesis', () => {
  const withSynthesis = (synthesis: unknown) =>
    RunResource.parse({
      ...hostileRun,
      goal: 'g',
      error: undefined,
      subtasks: [],
      answer: {
        ...hostileRun.answer!,
        text: 'Pro is $59. Coverage: all.',
        result: {},
        coverage: { ...hostileRun.answer!.coverage, statement: 'Coverage: all.' },
        synthesis,
      },
    });
  const base = {
    findings: [{ id: 'A#1', subtaskId: 'A', questionIds: ['q1'], statement: 'Pro is $59.', evidence: ['p-1'] }],
    setAside: [],
    attempts: 1,
    levels: 1,
  };

  it('shows each claim with its citations, and a clean audit', () => {
    const run = withSynthesis({
      ...base,
      by: 'model',
      claims: [
        { text: 'Pro is $59.', cites: ['A#1'] },
        { text: 'q3 is missing.', kind: 'gap', questionIds: ['q3'] },
      ],
      audit: { clean: true, findings: 1, cited: 1, setAside: 0, problems: [] },
    });
    expect(formatRun(run).split('\n').slice(1, 5)).toEqual([
      'Answer    Pro is $59.',
      'Claims    1. Pro is $59. [A#1]',
      '          2. q3 is missing. [gap: q3]',
      'Audit     clean (1 findings, 1 cited, 0 set aside)',
    ]);
  });

  it('shows the audit’s problems and why the merge answers', () => {
    const run = withSynthesis({
      ...base,
      by: 'merge',
      claims: [{ text: 'Pro is $49.', cites: ['A#9'] }],
      audit: {
        clean: false,
        findings: 1,
        cited: 0,
        setAside: 0,
        problems: [
          { code: 'unknown_citation', claim: 0, findingId: 'A#9', message: 'claim 0 cites A#9, which no ok finding of this run has' },
          { code: 'dropped_finding', findingId: 'A#1', message: 'finding A#1 (subtask A) is neither cited nor set aside' },
        ],
      },
      fallback: { reason: 'audit_failed', message: 'the audit found 2 problem(s) after the repair' },
    });
    expect(formatRun(run).split('\n').slice(2, 7)).toEqual([
      'Claims    1. Pro is $49. [A#9]',
      'Audit     2 problem(s) (1 findings, 0 cited, 0 set aside)',
      '          unknown_citation: claim 0 cites A#9, which no ok finding of this run has',
      '          dropped_finding: finding A#1 (subtask A) is neither cited nor set aside',
      'Fallback  the merge answers (audit_failed): the audit found 2 problem(s) after the repair',
    ]);
  });
});
