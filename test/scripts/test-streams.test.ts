import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { STAGES } from '../../scripts/test/streams';
import config from '../../vitest.config';

const packageScripts = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }).scripts;

const projects = (config.test?.projects ?? []).map((project) => (typeof project === 'object' && 'test' in project ? project.test?.name : undefined));

describe("npm test's streams (scripts/test/streams.ts)", () => {
  it('run every vitest project of vitest.config.ts exactly once', () => {
    const streamed = STAGES.flat().flatMap((stream) => stream.projects);
    expect(projects.every((name) => typeof name === 'string')).toBe(true);
    expect([...streamed].sort()).toEqual([...(projects as string[])].sort());
  });

  it('keep each project beside the ones it must follow: audit reads what integration recorded, chaos has its cloud after e2e', () => {
    const streamOf = (project: string) => STAGES.flat().find((stream) => stream.projects.includes(project))?.name;
    expect(streamOf('audit')).toBe(streamOf('integration'));
    expect(streamOf('chaos')).toBe(streamOf('e2e'));
    // The unit project runs before the other projects, beside nothing but the typecheck.
    expect(STAGES[0]?.flatMap((stream) => stream.projects)).toEqual(['unit']);
  });

  it("run the typecheck exactly once, beside the unit project, and npm test's own line no second time", () => {
    const scripted = STAGES.flat().filter((stream) => stream.script !== undefined);
    expect(scripted.map((stream) => stream.script)).toEqual(['typecheck']);
    expect(STAGES[0]?.map((stream) => stream.script)).toContain('typecheck');
    // A stream that is an npm script runs no vitest project, and names a script package.json has.
    for (const stream of scripted) {
      expect(stream.projects).toEqual([]);
      expect(packageScripts[stream.script as string]).toBeDefined();
    }
    expect(packageScripts.typecheck).toBe('tsc --noEmit');
    expect(packageScripts.test).not.toContain('typecheck');
    expect(packageScripts.test).toContain('scripts/test/run.ts');
  });
});
