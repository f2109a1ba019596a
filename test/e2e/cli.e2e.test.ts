import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { RunResource } from '../../lib/contract';
import { client, target } from './target';

const root = join(import.meta.dirname, '..', '..');

/** `tessera run` as a person runs it: a separate process, its stdout, stderr and exit code. */
const tessera = async (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [join(root, 'bin', 'tessera.mjs'), ...args], { cwd: root, timeout: 120_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
};

const api = () => ['--api', target().apiUrl, '--token', target().tokens.acme];

/*
 * The five commands run at once (`describe.concurrent`): each is its own process and its own run,
 * and most of their time is waiting on the runs' deadlines (the two Scout runs wait out the CRM
 * worker's; the CRM kind's two concurrent workers are one for each).
 */
describe.concurrent('tessera run', () => {
  it('--json prints exactly the run resource GET /runs/{runId} returns, and exits 0 on success', async () => {
    const result = await tessera('run', 'examples/catering.json', '--json', ...api());

    expect(result.code).toBe(0);
    const printed = RunResource.parse(JSON.parse(result.stdout));
    expect(printed).toEqual(await client().getRun(printed.runId));
    expect(result.stderr).toContain(`run ${printed.runId} accepted`);
  });

  it('prints the answer and the coverage statement for people', async () => {
    const result = await tessera('run', 'examples/tax-2025.json', ...api());

    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Answer    Deductible total: £1,137.47 from 72 transactions (24 deductible).');
    expect(result.stdout).toContain(
      'Coverage  Coverage: 2025-01-01 to 2025-12-31, four partitions, no overlaps. One gap (2025-06-28 to 2025-06-30) re-checked against the transaction feed: zero transactions.',
    );
  });

  it('says an incomplete answer is incomplete: the Scout example, q3 unanswered; --require-complete exits 3', async () => {
    const result = await tessera('run', 'examples/scout.json', '--require-complete', ...api());

    expect(result.code).toBe(3);
    expect(result.stdout.split('\n').slice(0, 3)).toEqual([
      expect.stringMatching(/^Run \S+ succeeded, incomplete$/),
      'Missing   q3 (Which live deals mention Vantage?)',
      'Unsettled crm:vantage  not read by C.r2 (timed_out), unchecked',
    ]);
  });

  it('exits 2 when the run fails, still printing its coverage', async () => {
    const result = await tessera('run', 'examples/scout-required.json', ...api());

    expect(result.code).toBe(2);
    expect(result.stdout).toContain('failed');
    expect(result.stdout).toContain('Coverage  Coverage: five sources, five partitions, no overlaps. One gap (id crm:vantage) not read: C.r2 timed out.');
  });

  it('exits 1 with every problem when the API rejects the request', async () => {
    const result = await tessera('run', 'examples/tax-2025-overlap.json', ...api());

    expect(result.code).toBe(1);
    expect(result.stderr).toContain('subtasks.1.scope.from');
    expect(result.stderr).toContain('assignment_overlap');
  });
});
