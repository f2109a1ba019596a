import { describe, expect, it } from 'vitest';
import { STAGES } from '../../scripts/test/streams';
import config from '../../vitest.config';

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
    // The unit project runs alone, before the others.
    expect(STAGES[0]).toEqual([{ name: 'unit', projects: ['unit'] }]);
  });
});
