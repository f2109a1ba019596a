import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countInvariants, INVARIANTS, playAll, scheduleArbitrary, violations, type ChaosTarget } from '../chaos/schedule';
import { client, deliverAgain } from './target';

/**
 * The chaos property suite: random fault schedules (duplicate deliveries, crashes after claim,
 * late results, transient failures, poison messages, model calls beyond the allowance, cancels at
 * random times) played against one API, many runs at once, with the invariants of
 * test/chaos/schedule.ts checked after every run. The seed is printed; `CHAOS_SEED=<seed>`
 * replays the same schedules, and `CHAOS_RUNS` changes how many runs are played (default 200).
 * `npm run bench -- chaos` plays 1,000 and prints the counts.
 */

const RUNS = Number(process.env.CHAOS_RUNS ?? 200);
/** Runs in flight at once: each waits seconds on its deadlines, so they overlap rather than queue. */
const CONCURRENT = 20;
const SEED = Number(process.env.CHAOS_SEED ?? Date.now() % 2_147_483_647);
/** A run of short deadlines ends well within this; one that does not has broken an invariant. */
const WAIT_MS = 120_000;

const target: ChaosTarget = {
  client: client('acme'),
  tenantId: 'acme',
  deliver: (message) => deliverAgain('chaos', message),
};

describe('chaos: random fault schedules keep the invariants', () => {
  it(`plays ${RUNS} runs of random faults; after each: ${Object.values(INVARIANTS).join('; ')}`, async () => {
    console.log(`chaos seed ${SEED} (CHAOS_SEED=${SEED} replays these schedules)`);
    const played: Awaited<ReturnType<typeof playAll>> = [];
    await fc.assert(
      fc.asyncProperty(fc.array(scheduleArbitrary, { minLength: CONCURRENT, maxLength: CONCURRENT }), async (schedules) => {
        const batch = await playAll(target, schedules, { concurrency: CONCURRENT, waitMs: WAIT_MS });
        played.push(...batch);
        const broken = batch.flatMap((run) => {
          const found = Object.entries(violations(run)).filter(([, problems]) => problems.length > 0);
          return found.length === 0 ? [] : [{ runId: run.runId, schedule: run.schedule, violations: Object.fromEntries(found) }];
        });
        if (broken.length > 0) throw new Error(`seed ${SEED}: ${broken.length} runs broke an invariant:\n${JSON.stringify(broken, null, 2)}`);
      }),
      // Against a real cloud, shrinking would replay whole batches for minutes: the seed and the
      // schedules in the message are the reproduction.
      { seed: SEED, numRuns: Math.ceil(RUNS / CONCURRENT), endOnFailure: true },
    );
    const counts = countInvariants(played);
    console.log(`chaos: ${JSON.stringify(counts)}`);
    expect(counts.runs).toBeGreaterThanOrEqual(RUNS);
    expect(counts.violations).toEqual({ oneTerminalState: 0, withinAllowance: 0, runEnded: 0, completeIffClean: 0 });
  });
});
