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

const cli = JSON.parse(readFileSync(new URL('../../packages/local/package.json', import.meta.url), 'utf8')) as { name: string; version: string };

describe('tessera init', () => {
  it('creates the starter project, depending on this version of the package', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'tessera-init-')), 'My Project');
    const { code, out } = await init([dir]);
    expect(code).toBe(0);
    expect(out).toContain('npx tessera run requests/todo-review.json');
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    expect(manifest.name).toBe('my-project');
    // The core package a dependency, the CLI's own package a dev dependency, both at the CLI's version.
    expect(manifest.dependencies['@tessera-fanout/tessera']).toBe(`^${cli.version}`);
    expect(manifest.devDependencies['@tessera-fanout/local']).toBe(`^${cli.version}`);
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

  it("writes the core package's feature flags into cdk.json, and the template's allowScripts stay in package.json", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'tessera-init-')), 'flags');
    expect((await init([dir])).code).toBe(0);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    // The template decides esbuild's postinstall: not run (bundling does without it).
    expect(manifest.allowScripts).toEqual({ esbuild: false });
    const rootFlags = (JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> }).context;
    const cdkJson = JSON.parse(readFileSync(join(dir, 'cdk.json'), 'utf8'));
    // Every flag the local cloud synthesizes with, then the starter's own issuer and audience.
    expect(cdkJson.context).toEqual({ ...rootFlags, issuer: 'https://issuer.example.com', audience: 'todo-review' });
    expect(Object.keys(rootFlags).filter((key) => key.startsWith('@aws-cdk')).length).toBeGreaterThan(80);
    expect(cdkJson.app).toBe('npx tsx bin/app.ts');
  });

  it("keeps the starter's own context over a flag of the same name", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'tessera-init-')), 'own');
    const t = terminal();
    const command = createInitCommand({ featureFlags: { '@aws-cdk/core:flag': true, issuer: 'https://elsewhere.example.com' } });
    expect(await runCli(['init', dir], { init: command }, t.io)).toBe(0);
    const cdkJson = JSON.parse(readFileSync(join(dir, 'cdk.json'), 'utf8'));
    expect(cdkJson.context).toEqual({ '@aws-cdk/core:flag': true, issuer: 'https://issuer.example.com', audience: 'todo-review' });
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
