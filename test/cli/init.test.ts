import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createInitCommand } from '../../lib/cli/init';
import { runCli, type CliIo } from '../../lib/cli/router';

const terminal = () => {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (text) => void out.push(text), err: (text) => void err.push(text), readText: async () => '' };
  return { io, out, err };
};

const init = async (args: string[]) => {
  const t = terminal();
  const code = await runCli(['init', ...args], { init: createInitCommand() }, t.io);
  return { code, out: t.out.join('\n'), err: t.err.join('\n') };
};

const rootVersion = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

describe('tessera init', () => {
  it('creates the starter project, depending on this version of the package', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'tessera-init-')), 'My Project');
    const { code, out } = await init([dir]);
    expect(code).toBe(0);
    expect(out).toContain('npx tessera run requests/todo-review.json');
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    expect(manifest.name).toBe('my-project');
    expect(manifest.dependencies['@tessera-fanout/tessera']).toBe(`^${rootVersion}`);
    expect(manifest.tessera).toEqual({ workers: 'src/workers.ts' });
    for (const file of [
      'src/workers.ts',
      'src/todo-review.ts',
      'test/todo-review.test.ts',
      'bin/app.ts',
      'cdk.json',
      'requests/todo-review.json',
      'README.md',
      'tsconfig.json',
    ]) {
      expect(existsSync(join(dir, file)), file).toBe(true);
    }
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toBe('node_modules/\ncdk.out/\n.tessera/\n');
    expect(existsSync(join(dir, 'node_modules'))).toBe(false);
  });

  it('refuses a directory that is not empty, and leaves it alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-init-'));
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    expect(await init([dir])).toEqual({ code: 1, out: '', err: `${dir} exists and is not empty: give a new directory` });
    expect(existsSync(join(dir, 'package.json'))).toBe(false);
  });

  it('accepts an empty directory', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'tessera-init-')), 'empty');
    mkdirSync(dir);
    expect((await init([dir])).code).toBe(0);
  });

  it('needs exactly one DIR', async () => {
    expect(await init([])).toEqual({ code: 1, out: '', err: 'tessera init: expected one DIR (got 0)\nusage: tessera init DIR' });
  });
});
