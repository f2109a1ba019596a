import { defineConfig } from 'vitest/config';

/**
 * Three projects, by what a test needs:
 * - unit: pure code and synthesized templates; no servers.
 * - integration (`*.int.test.ts`): DynamoDB Local and the SQS emulator, started once per run.
 * - e2e (`*.e2e.test.ts`): the whole local cloud, or a deployed API when TESSERA_API_URL is set.
 * - chaos: the chaos property suite, an e2e file run after the others on a cloud of its own.
 * - audit (`*.audit.test.ts`): the IAM grants against the ledger calls the integration project
 *   recorded on the wire, and the offline IAM simulation of them (test/iam); runs after it.
 * - browser (`*.browser.test.ts`): the local viewer in Debian's Chromium (scripts/browser/install.sh)
 *   against a local cloud of its own.
 */
// Local development runs Node 20 on purpose (see README); the SDK's notice about its future
// Node 22 requirement would otherwise print in every process, global setups included.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** The chaos property suite: an end-to-end file with a project of its own (below). */
const CHAOS_SUITE = 'test/e2e/chaos.e2e.test.ts';

/**
 * CI (.ci/run) also asks for the results as JSON, at the path in TESSERA_TEST_RESULTS, and closes
 * its log with one plain line counted from them ("tests: N passed, N failed, N skipped").
 */
const resultsFile = process.env.TESSERA_TEST_RESULTS;

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
          exclude: ['test/**/*.int.test.ts', 'test/**/*.e2e.test.ts', 'test/**/*.browser.test.ts', 'test/**/*.audit.test.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.int.test.ts'],
          globalSetup: ['test/support/emulators.global.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
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
          sequence: { groupOrder: 1 },
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
          sequence: { groupOrder: 1 },
          testTimeout: 900_000,
        },
      },
    ],
  },
});
