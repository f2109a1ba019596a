import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * The committed API reports (etc/api/<package>/<entry>.api.md) must describe the public surface
 * the sources declare today. The check builds the declarations afresh in a temporary directory and
 * runs api-extractor on every entry point of every package's exports map without writing anything;
 * after an intended change, `npm run api:report` regenerates the reports for review.
 */
describe('the API reports', () => {
  it('match the public surface of every entry point', async () => {
    const run = promisify(execFile);
    const { stdout } = await run(process.execPath, ['scripts/api-report.mjs', '--check'], { maxBuffer: 16 * 1024 * 1024 }).catch(
      (error: { stdout?: string; stderr?: string }) => {
        throw new Error(`api-report --check failed (run npm run api:report and review etc/api):\n${error.stdout ?? ''}${error.stderr ?? ''}`);
      },
    );
    expect(
      stdout
        .trim()
        .split('\n')
        .filter((line) => /^[a-z]+\/[a-z]+: /.test(line)),
    ).toEqual([
      'client/client: unchanged',
      'client/web: unchanged',
      'tessera/workers: unchanged',
      'tessera/testing: unchanged',
      'tessera/cdk: unchanged',
      'tessera/mcp: unchanged',
      'local/local: unchanged',
    ]);
  }, 600_000);
});
