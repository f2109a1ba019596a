import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { Coverage } from '../../lib/contract';
import { commands as mainCommands } from '../../lib/cli/main';
import { createPlanCommand } from '../../lib/cli/plan';
import { reconcileCommand } from '../../lib/cli/reconcile';
import { runCli } from '../../lib/cli/router';
import { terminal } from './support/terminal';
import { catalogOf, farFuture, kindInfo, taxRequest, testCatalog } from '../domain/fixtures';

const commands = { plan: createPlanCommand({ catalog: testCatalog }), reconcile: reconcileCommand };
const cli = async (argv: string[], files: Record<string, string> = {}) => {
  const t = terminal(files);
  const code = await runCli(argv, commands, t.io);
  return { code, out: t.out.join('\n'), err: t.err.join('\n') };
};

const fixed = JSON.stringify(taxRequest());
const typo = JSON.stringify(taxRequest('2025-03-01'));

describe('tessera plan', () => {
  it('prints the tiling and exits 0 when the plan tiles', async () => {
    expect(await cli(['plan', 'tax.json'], { 'tax.json': fixed })).toEqual({
      code: 0,
      err: '',
      out: [
        'Plan: 4 subtasks tile 2025-01-01 to 2025-12-31',
        '  A  tax-statements  2025-01-01..2025-04-01  required  60s  q1',
        '  B  tax-statements  2025-04-01..2025-07-01  required  60s  q1',
        '  C  tax-statements  2025-07-01..2025-10-01  required  60s  q1',
        '  D  tax-statements  2025-10-01..2026-01-01  required  60s  q1',
      ].join('\n'),
    });
  });

  it('prints every problem and exits 1 when it does not', async () => {
    expect(await cli(['plan', 'typo.json'], { 'typo.json': typo })).toEqual({
      code: 1,
      err: '',
      out: 'typo.json was rejected (1 problem):\n  subtasks.1.scope.from  assignment_overlap  subtasks A and B both cover 2025-03-01..2025-04-01',
    });
  });

  it('prints the same result as JSON with --json', async () => {
    const { code, out } = await cli(['plan', 'typo.json', '--json'], { 'typo.json': typo });
    const parsed: unknown = JSON.parse(out);
    expect(code).toBe(1);
    expect(parsed).toEqual({
      ok: false,
      problems: [
        {
          code: 'assignment_overlap',
          path: 'subtasks.1.scope.from',
          subtaskIds: ['A', 'B'],
          from: '2025-03-01',
          toExclusive: '2025-04-01',
          message: 'subtasks A and B both cover 2025-03-01..2025-04-01',
        },
      ],
    });
    const ok: unknown = JSON.parse((await cli(['plan', '--json', 'tax.json'], { 'tax.json': fixed })).out);
    expect(ok).toMatchObject({ ok: true, subtasks: [{ id: 'A' }, { id: 'B' }, { id: 'C' }, { id: 'D' }] });
  });

  it("warns, on stderr and in --json, when a kind's default capacity cannot meet the deadlines: 200 × 2 s at 25 at once, 10 s", async () => {
    const timed = catalogOf([kindInfo({ kind: 'ticket-triage', dimension: 'ids', typicalSeconds: 2 })]);
    const request = {
      goal: 'Triage the queue',
      universe: { dimension: 'ids', ids: Array.from({ length: 200 }, (_, i) => `t-${i}`) },
      split: { worker: 'ticket-triage', chunkSize: 1, deadlineSeconds: 10, budget: { modelCalls: 1, estimatedCostPerCall: 1 } },
      budget: { modelCalls: 10, costLimit: 10 },
    };
    const t = terminal({ 'q.json': JSON.stringify(request) });
    const plan = { plan: createPlanCommand({ catalog: timed }) };
    expect(await runCli(['plan', 'q.json'], plan, t.io)).toBe(0);
    const message = '200 ticket-triage subtasks, 25 at a time of about 2 s each, take 8 waves (16 s): 75 cannot finish by their 10 s deadline';
    expect(t.err).toEqual([`warning (capacity_short) split.deadlineSeconds: ${message}`]);
    const json = terminal({ 'q.json': JSON.stringify(request) });
    await runCli(['plan', 'q.json', '--json'], plan, json.io);
    expect(JSON.parse(json.out.join('\n'))).toMatchObject({
      ok: true,
      warnings: [{ code: 'capacity_short', worker: 'ticket-triage', path: 'split.deadlineSeconds', message }],
    });
  });

  it('checks deadlines against --max-deadline-seconds', async () => {
    const { code, out } = await cli(['plan', 'tax.json', '--max-deadline-seconds', '30'], { 'tax.json': fixed });
    expect(code).toBe(1);
    expect(out.split('\n')[1]).toBe('  subtasks.0.deadlineSeconds  deadline_out_of_horizon  must be between 1 and 30 seconds (got 60)');
  });

  it('exits 1 naming the field of a far-future range instead of crashing', async () => {
    expect(await cli(['plan', 'far.json'], { 'far.json': JSON.stringify(farFuture) })).toEqual({
      code: 1,
      err: '',
      out: [
        'far.json was rejected (1 problem):',
        '  universe.toExclusive  invalid_request  is after 9999-12-31 in the offset of from (9999-12-31T00:00:00+00:00); points of a range are written in that offset with four-digit years (got "9999-12-31T23:00:00-12:00")',
      ].join('\n'),
    });
  });

  it('exits 1 with one clear line for a missing file, bad JSON and a wrong call', async () => {
    expect(await cli(['plan', 'nope.json'])).toEqual({
      code: 1,
      out: '',
      err: "nope.json cannot be read: ENOENT: no such file or directory, open 'nope.json'",
    });
    expect((await cli(['plan', 'bad.json'], { 'bad.json': '{ "goal": ' })).err).toMatch(/^bad\.json is not valid JSON: /);
    expect(await cli(['plan', 'a.json', '--yaml'])).toMatchObject({ code: 1, err: expect.stringContaining("tessera plan: Unknown option '--yaml'") });
    expect(await cli(['plan', 'a.json', 'b.json'])).toEqual({
      code: 1,
      out: '',
      err: 'tessera plan: expected one FILE (got 2)\nusage: tessera plan FILE [--json] [--max-deadline-seconds N] [--workers PATH]',
    });
  });
});

const reconcileInput = (bGap: 'empty' | 'none') =>
  JSON.stringify({
    universe: { dimension: 'time', from: '2025-01-01', toExclusive: '2026-01-01' },
    sources: {
      'tax-statements': { label: 'monthly statements', recordNoun: 'transactions', alternateSource: 'transaction-feed' },
      'transaction-feed': { label: 'transaction feed', recordNoun: 'transactions' },
    },
    subtasks: [
      ...[
        ['A', '2025-01-01', '2025-04-01'],
        ['B', '2025-04-01', '2025-07-01'],
        ['C', '2025-07-01', '2025-10-01'],
        ['D', '2025-10-01', '2026-01-01'],
      ].map(([id, from, toExclusive]) => ({ id, worker: 'tax-statements', round: 1, questionIds: ['q1'], required: true, assigned: { from, toExclusive } })),
      ...(bGap === 'empty'
        ? [
            {
              id: 'B.g1',
              worker: 'transaction-feed',
              round: 2,
              assigned: { from: '2025-06-28', toExclusive: '2025-07-01' },
              lineage: { kind: 'recheck', of: 'B', gap: { from: '2025-06-28', toExclusive: '2025-07-01' } },
            },
          ]
        : []),
    ],
    outcomes: [
      { subtaskId: 'A', state: 'ok', observed: { minDate: '2025-01-01', maxDate: '2025-03-31', recordCount: 190 }, sourcesReached: 3 },
      { subtaskId: 'B', state: 'ok', observed: { minDate: '2025-04-01', maxDate: '2025-06-27', recordCount: 214 }, sourcesReached: 3 },
      { subtaskId: 'C', state: 'timed_out', observed: null },
      { subtaskId: 'D', state: 'ok', observed: { minDate: '2025-10-01', maxDate: '2025-12-31', recordCount: 230 }, sourcesReached: 3 },
      ...(bGap === 'empty' ? [{ subtaskId: 'B.g1', state: 'empty', observed: { minDate: null, maxDate: null, recordCount: 0 }, sourcesReached: 1 }] : []),
    ],
  });

describe('tessera reconcile', () => {
  it('prints the statement and the fields behind it, exit 0 even when coverage is incomplete', async () => {
    const { code, out } = await cli(['reconcile', 'run.json'], { 'run.json': reconcileInput('empty') });
    expect(code).toBe(0);
    expect(out).toBe(
      [
        'Coverage: 2025-01-01 to 2025-12-31, four partitions, no overlaps. Two gaps: (2025-06-28 to 2025-06-30) re-checked against the transaction feed: zero transactions; (2025-07-01 to 2025-09-30) not read: C timed out. Not covered: C (monthly statements, required) timed out. Question q1 unanswered.',
        '',
        'complete: no',
        'partitions: 4',
        'missing questions: q1',
        'degraded: C:timed_out',
        'gaps:',
        '  2025-06-28..2025-07-01  observed by B              confirmed_empty  B.g1 against transaction-feed  0 records',
        '  2025-07-01..2025-10-01  not read by C (timed_out)  unchecked                                       ',
        'reconcile found (1 problem):',
        "  outcomes.1.observed  observed_ends_early  B's data ends 2025-06-27, before its assignment ends (2025-07-01 exclusive): gap 2025-06-28..2025-07-01",
      ].join('\n'),
    );
  });

  it('prints the coverage JSON with --json, valid against the contract', async () => {
    const { code, out } = await cli(['reconcile', '--json', 'run.json'], { 'run.json': reconcileInput('none') });
    const coverage = Coverage.parse(JSON.parse(out));
    expect(code).toBe(0);
    expect(coverage).toMatchObject({
      complete: false,
      degradedReason: ['C:timed_out', 'B:observed_ends_early'],
      gaps: [
        { kind: 'observed', subtaskId: 'B', status: 'unchecked', from: '2025-06-28', toExclusive: '2025-07-01' },
        { kind: 'unread', subtaskId: 'C', reason: 'timed_out', status: 'unchecked', from: '2025-07-01', toExclusive: '2025-10-01' },
      ],
    });
  });

  it('exits 1 naming every schema issue by path', async () => {
    const { code, err } = await cli(['reconcile', 'run.json'], {
      'run.json': JSON.stringify({ universe: { dimension: 'time', from: '2025-02-30', toExclusive: '2026-01-01' }, subtasks: [] }),
    });
    expect(code).toBe(1);
    expect(err).toBe(
      [
        'run.json is not a reconcile input:',
        '  universe.from: must be an ISO date (YYYY-MM-DD) or an ISO instant with an offset, on a real calendar day',
        '  outcomes: Invalid input: expected array, received undefined',
      ].join('\n'),
    );
  });
});

describe('the command router', () => {
  it('prints usage: on stdout for --help (exit 0), on stderr with no command or an unknown one (exit 1)', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    expect(help.out.split('\n').slice(0, 5)).toEqual([
      'usage: tessera <command> [options]',
      '',
      'commands:',
      '  plan       validate a run request and print the tiling it generates (exit 1 with every problem if it does not tile)',
      '  reconcile  print the coverage of a run from its manifest and outcomes (an offline audit)',
    ]);
    expect(await cli([])).toMatchObject({ code: 1, out: '', err: help.out });
    expect(await cli(['toString'])).toMatchObject({ code: 1, err: `tessera: unknown command toString\n\n${help.out}` });
  });

  it("prints a command's own usage for tessera <command> --help", async () => {
    expect(await cli(['reconcile', '--help'])).toEqual({
      code: 0,
      err: '',
      out: [
        'usage: tessera reconcile FILE [--json]',
        '',
        'print the coverage of a run from its manifest and outcomes (an offline audit)',
        '',
        'FILE holds { universe, subtasks, outcomes, sources?, policy?, questions? }; - reads standard input.',
        '',
        'options:',
        '  --json  print JSON instead of text',
        '',
        'exit status:',
        '  0  the coverage was printed, whatever it says',
        '  1  FILE cannot be read or is not a reconcile input (every issue is printed with its path)',
      ].join('\n'),
    });
  });

  it('lists the options, exit statuses and environment variables of every command in its --help', async () => {
    for (const [name, command] of Object.entries(mainCommands)) {
      const t = terminal({});
      expect(await runCli([name, '--help'], mainCommands, t.io)).toBe(0);
      const help = t.out.join('\n');
      expect(help, name).toContain('\nexit status:\n  0  ');
      // Every --flag of the usage line is explained under options.
      const flags = [...command.usage.matchAll(/\[(--[a-z-]+)/g)].map((m) => m[1]!);
      for (const flag of flags) expect(help, `${name} ${flag}`).toMatch(new RegExp(`\\n  ${flag}\\b`));
    }
    const runs = terminal({});
    await runCli(['runs', '--help'], mainCommands, runs.io);
    expect(runs.out.join('\n')).toContain('\nenvironment:\n  TESSERA_API_URL  ');
    expect(runs.out.join('\n')).toContain('\n  TESSERA_TOKEN    ');
  });
});

describe('bin/tessera.mjs', () => {
  it('runs the real command table from the package bin, with the worker module package.json names', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-cli-'));
    const file = join(dir, 'tax.json');
    writeFileSync(file, fixed);
    const { stdout } = await promisify(execFile)(process.execPath, ['bin/tessera.mjs', 'plan', file, '--json'], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
    });
    const parsed: unknown = JSON.parse(stdout);
    expect(parsed).toMatchObject({ ok: true, subtasks: [{ id: 'A', worker: 'tax-statements' }, { id: 'B' }, { id: 'C' }, { id: 'D' }] });
  });
});
