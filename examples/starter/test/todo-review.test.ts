import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RunRequest } from '@tessera-fanout/tessera';
import { runOffline } from '@tessera-fanout/tessera/testing';
import { registry } from '../src/workers.js';

/**
 * The fixture repository (src/fixture-repo.ts), read by hand: src/app.ts has 6 lines with a TODO
 * on line 2 and a FIXME on line 5; src/util.ts has 3 lines with a TODO on line 2;
 * vendor/left-pad.js has 4 lines with a TODO on line 2. 13 lines in all.
 */
const ALL = { files: [{ path: 'src/app.ts' }, { path: 'src/util.ts' }, { path: 'vendor/left-pad.js' }] };
const APP_TODO = { path: 'src/app.ts', line: 2, tag: 'TODO', text: 'read the port from the environment' };
const APP_FIXME = { path: 'src/app.ts', line: 5, tag: 'FIXME', text: 'handle SIGTERM' };
const UTIL_TODO = { path: 'src/util.ts', line: 2, tag: 'TODO', text: 'trim before padding' };
const VENDOR_TODO = { path: 'vendor/left-pad.js', line: 2, tag: 'TODO', text: 'upstream removed this' };

describe('todo-review', () => {
  it('reads every assigned file whole: 13 lines observed, 4 items, coverage complete', async () => {
    const { outcome, coverage } = await runOffline({ registry, worker: 'todo-review', assigned: ALL });
    expect(outcome).toMatchObject({
      state: 'ok',
      observed: { files: ALL.files, recordCount: 13 },
      sources: ['src/app.ts', 'src/util.ts', 'vendor/left-pad.js'],
      usage: { modelCalls: 0, estimatedCost: 0 },
      refusals: [],
      findings: { items: [APP_TODO, APP_FIXME, UTIL_TODO, VENDOR_TODO] },
    });
    expect(coverage).toMatchObject({ complete: true, gaps: [], degradedReason: [] });
  });

  it('leaves vendor/ unread when told to ignore it: its lines are a lines_not_inspected gap', async () => {
    const assigned = { files: [{ path: 'src/app.ts' }, { path: 'src/util.ts' }, { path: 'vendor/left-pad.js', lines: [[1, 4]] as [number, number][] }] };
    const { outcome, coverage } = await runOffline({ registry, worker: 'todo-review', assigned, input: { ignore: ['vendor/'] } });
    // The worker's answer is valid, so the state is ok; the coverage says what it did not read.
    expect(outcome).toMatchObject({
      state: 'ok',
      observed: { files: [{ path: 'src/app.ts' }, { path: 'src/util.ts' }], recordCount: 9 },
      findings: { items: [APP_TODO, APP_FIXME, UTIL_TODO] },
    });
    expect(coverage.complete).toBe(false);
    expect(coverage.gaps).toEqual([{ kind: 'observed', subtaskId: 'S1', status: 'unchecked', files: [{ path: 'vendor/left-pad.js', lines: [[1, 4]] }] }]);
    expect(coverage.problems.map((problem) => problem.code)).toEqual(['lines_not_inspected']);
  });

  it('skips a whole file it is told to ignore (README step 6): ok, nothing read, the file a lines_not_inspected gap, no unreachable source', async () => {
    const assigned = { files: [{ path: 'vendor/left-pad.js' }] };
    const { outcome, coverage } = await runOffline({ registry, worker: 'todo-review', assigned, input: { ignore: ['vendor/'] } });
    // The worker asked its file tool for nothing: a choice, not a source it could not reach.
    expect(outcome).toMatchObject({ state: 'ok', observed: { files: [], recordCount: 0 }, sources: [], sourcesReached: 0, findings: { items: [] } });
    expect(outcome.reason).not.toMatch(/reach/);
    expect(coverage.complete).toBe(false);
    expect(coverage.gaps).toEqual([{ kind: 'observed', subtaskId: 'S1', status: 'unchecked', files: [{ path: 'vendor/left-pad.js' }] }]);
    expect(coverage.problems.map((problem) => problem.code)).toEqual(['lines_not_inspected']);
    expect(coverage.statement).not.toContain('could not reach');
  });

  it('reads only the assigned lines of a file', async () => {
    const { outcome, coverage } = await runOffline({ registry, worker: 'todo-review', assigned: { files: [{ path: 'src/app.ts', lines: [[1, 3]] }] } });
    expect(outcome).toMatchObject({
      state: 'ok',
      observed: { files: [{ path: 'src/app.ts', lines: [[1, 3]] }], recordCount: 3 },
      findings: { items: [APP_TODO] },
    });
    expect(coverage.complete).toBe(true);
  });

  it('merges the subtasks of a run into one sorted list', () => {
    const merged = registry.merge([
      { worker: 'todo-review', findings: { items: [VENDOR_TODO] } },
      { worker: 'todo-review', findings: { items: [UTIL_TODO, APP_TODO] } },
    ]);
    expect(merged.result).toEqual({ items: [APP_TODO, UTIL_TODO, VENDOR_TODO] });
    expect(merged.text).toBe('3 TODO/FIXME lines in 3 files.');
  });

  it('ships a run request that the contract accepts', () => {
    const request = RunRequest.parse(JSON.parse(readFileSync(new URL('../requests/todo-review.json', import.meta.url), 'utf8')));
    expect(request.subtasks?.map((s) => s.worker)).toEqual(['todo-review', 'todo-review']);
  });
});
