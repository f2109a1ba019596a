/**
 * The streams `npm test` runs (scripts/test/run.ts), by vitest project (vitest.config.ts): the
 * unit project first, beside the typecheck (`npm run typecheck`), then two streams side by side.
 * The typecheck is one thread of CPU with no deadline to miss: beside the unit project it fills
 * the core that project's last, longest file leaves idle. Each test stream runs one file at a time;
 * only the two overlap, and they are short of different things: the data plane mostly of CPU
 * (concurrent conditional writes against DynamoDB Local), the cloud mostly of time (runs waiting
 * on real deadlines). The browser project, which drives a local cloud of its own, goes with the
 * cloud: measured on 2 cores, the two streams then take about as long as each other.
 * test/scripts/test-streams.test.ts holds that every project runs exactly once.
 */
export interface Stream {
  /** Printed in front of each of its lines when it runs beside another. */
  readonly name: string;
  /** The vitest projects it runs, in one vitest; none for a stream that is an npm script. */
  readonly projects: readonly string[];
  /** The npm script it runs instead of vitest (package.json). */
  readonly script?: string;
}

export const STAGES: readonly (readonly Stream[])[] = [
  [
    { name: 'unit', projects: ['unit'] },
    { name: 'typecheck', projects: [], script: 'typecheck' },
  ],
  [
    { name: 'data plane', projects: ['integration', 'audit'] },
    { name: 'cloud', projects: ['e2e', 'browser', 'chaos'] },
  ],
];
