import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * The projects, by what a test needs:
 * - unit: pure code and synthesized templates; no servers.
 * - integration (`*.int.test.ts`): DynamoDB Local and the SQS emulator, started once per run.
 * - e2e (`*.e2e.test.ts`): the whole local cloud, or a deployed API when TESSERA_API_URL is set.
 * - chaos: the chaos property suite, an e2e file run after the others on a cloud of its own.
 * - audit (`*.audit.test.ts`): the IAM grants against the ledger calls the integration project
 *   recorded on the wire, and the offline IAM simulation of them (test/iam); runs after it.
 * - browser (`*.browser.test.ts`): the local viewer in Debian's Chromium (scripts/browser/install.sh)
 *   against a local cloud of its own.
 */
/** The chaos property suite: an end-to-end file with a project of its own (below). */
const CHAOS_SUITE = 'test/e2e/chaos.e2e.test.ts';

/**
 * CI (.ci/run) also asks for the results as JSON, at the path in TESSERA_TEST_RESULTS, and closes
 * its log with one plain line counted from them ("tests: N passed, N failed, N skipped").
 */
const resultsFile = process.env.TESSERA_TEST_RESULTS;

/**
 * Test files run at once in the unit project: one per core. Vitest's default is one fewer than the
 * cores, a single worker on a 2-core CI machine, which leaves a core idle while the unit files
 * synthesize templates and build packages, all CPU and no deadlines. The other projects keep one
 * file at a time: their tests race real deadlines and count concurrent conditional writes against
 * DynamoDB Local, and a second file beside them on two cores turns waits into timeouts.
 * TESSERA_UNIT_WORKERS overrides it. Projects with different worker counts run as groups in turn
 * (`sequence.groupOrder`): unit first, then integration, e2e and browser, then audit, then chaos.
 * `npm test` runs them in two vitest processes side by side instead (scripts/test/streams.ts): the
 * data plane (integration, audit) beside the cloud (e2e, browser, chaos), each one file at a time.
 */
const unitWorkers = Number(process.env.TESSERA_UNIT_WORKERS) || availableParallelism();

export default defineConfig({
  test: {
    ...(resultsFile ? { reporters: ['default', 'json'], outputFile: { json: resultsFile } } : {}),
    testTimeout: 30_000,
    hookTimeout: 120_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          maxWorkers: unitWorkers,
          // The unit files share each worker's module cache: most of a unit file's time was loading
          // aws-cdk-lib, zod and the ledger again (on 2 cores, 128 s isolated, 73 s shared). They
          // hold no module state between files (each restores what it stubs), and they pass
          // shuffled in one process (`--no-isolate --sequence.shuffle.files`, one worker).
          isolate: false,
          sequence: { groupOrder: 0 },
          exclude: ['test/**/*.int.test.ts', 'test/**/*.e2e.test.ts', 'test/**/*.browser.test.ts', 'test/**/*.audit.test.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
          include: ['test/**/*.int.test.ts'],
          globalSetup: ['test/support/emulators.global.ts'],
          // A hang guard, not a deadline: 200 concurrent conditional writes take DynamoDB Local about
          // 9 s on an idle 2-core machine and three times that beside CI's background emulator lane.
          testTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
          include: ['test/**/*.e2e.test.ts'],
          exclude: [CHAOS_SUITE],
          globalSetup: ['test/e2e/global-setup.ts'],
          // Runs wait on real deadlines (seconds each); the API under test may be remote.
          testTimeout: 180_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'browser',
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
          include: ['test/browser/*.browser.test.ts'],
          testTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'audit',
          include: ['test/**/*.audit.test.ts'],
          // After the integration project, whose files leave their recorded calls in .tessera/wire-calls.
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
      {
        extends: true,
        test: {
          name: 'chaos',
          include: [CHAOS_SUITE],
          // Its own cloud (or the same remote API), once the other projects are done: hundreds of
          // concurrent runs would otherwise make the e2e tests' own deadlines race for the CPU.
          globalSetup: ['test/e2e/global-setup.ts'],
          sequence: { groupOrder: 3 },
          testTimeout: 900_000,
        },
      },
    ],
  },
});
