import { describe, expect, it } from 'vitest';
import { checkTiling, readTimePoint } from '../../lib/domain';
import { DEFAULT_CHECKPOINT_POLICY } from '../../lib/workers/checkpointer';
import { GOAL, best } from '../../bench/scout.bench';
import { calibrationFigures, TOLERANCE } from '../../bench/scout/calibrate';
import { checkpointWrites, handoverPause, prefixAt } from '../../bench/scout/checkpoints';
import { callsSpent, SCOUT, SCOUT_MODEL, type Account } from '../../bench/scout/model';
import { firstCompleteCover, hedgeScopes, replayRun, type Copy, type Policy } from '../../bench/scout/policies';
import { randomFor, type Random } from '../../bench/scout/random';
import { accountsFor, percentile, replay, summarise, type Summary } from '../../bench/scout/replay';

const DEADLINE = SCOUT.deadlineSeconds;
const YEAR = { from: '2025-01-01', toExclusive: '2026-01-01' };

describe('the seeded streams', () => {
  it('repeat for the same seed and keys, and differ for another key', () => {
    const draw = (key: number) => Array.from({ length: 5 }, randomFor(15, 3, key).uniform);
    expect(draw(1)).toEqual(draw(1));
    expect(draw(1)).not.toEqual(draw(2));
    expect(draw(1).every((u) => u >= 0 && u < 1)).toBe(true);
  });
});

describe('the hedge step', () => {
  it('cuts a 7-day scope into 3 pieces of whole days with the planner splitter, which tile it', () => {
    const scope = { from: '2025-01-01', toExclusive: '2025-01-08' };
    const pieces = hedgeScopes({ kind: 'subdivide', deadlineSeconds: DEADLINE, afterSeconds: 10, pieces: 3 }, scope);
    // 7 days in 3 parts: cuts at ⌊7i/3⌋ = 0, 2, 4, 7.
    expect(pieces).toEqual([
      { from: '2025-01-01', toExclusive: '2025-01-03' },
      { from: '2025-01-03', toExclusive: '2025-01-05' },
      { from: '2025-01-05', toExclusive: '2025-01-08' },
    ]);
    expect(
      checkTiling(
        { dimension: 'time', ...scope },
        pieces.map((p, i) => ({ id: `p${i}`, scope: p })),
      ),
    ).toEqual([]);
  });

  it('replicates the same scope once, and starts nothing for the unhedged policies', () => {
    expect(hedgeScopes({ kind: 'replicate', deadlineSeconds: DEADLINE, afterSeconds: 10 }, YEAR)).toEqual([YEAR]);
    expect(hedgeScopes({ kind: 'none', deadlineSeconds: DEADLINE }, YEAR)).toEqual([]);
  });
});

describe('the winner rule: the first complete cover', () => {
  const copy = (id: string, group: string, scope: { from: string; toExclusive: string }, start: number, seconds: number): Copy => ({
    id,
    group,
    scope,
    notes: 1,
    start,
    seconds,
    deadline: DEADLINE,
  });
  const H1 = { from: '2025-01-01', toExclusive: '2025-07-01' };
  const H2 = { from: '2025-07-01', toExclusive: '2026-01-01' };

  it('lets the pieces win when the original misses its deadline: at the last piece', () => {
    const cover = firstCompleteCover(YEAR, [copy('C', 'original', YEAR, 0, 30), copy('C.p1', 'subdivide', H1, 11, 1), copy('C.p2', 'subdivide', H2, 11, 3)]);
    expect(cover).toEqual({ group: 'subdivide', at: 14, ids: ['C.p1', 'C.p2'] });
  });

  it('lets the original win when it finishes before the last piece, and on a tie', () => {
    const pieces = [copy('C.p1', 'subdivide', H1, 11, 1), copy('C.p2', 'subdivide', H2, 11, 3)];
    expect(firstCompleteCover(YEAR, [copy('C', 'original', YEAR, 0, 13), ...pieces])?.group).toBe('original');
    expect(firstCompleteCover(YEAR, [copy('C', 'original', YEAR, 0, 14), ...pieces])).toEqual({ group: 'original', at: 14, ids: ['C'] });
  });

  it('lets a replica win at its own finish', () => {
    expect(firstCompleteCover(YEAR, [copy('C', 'original', YEAR, 0, 22), copy('C.r1', 'replicate', YEAR, 9, 11)])).toEqual({
      group: 'replicate',
      at: 20,
      ids: ['C.r1'],
    });
  });

  it('finds no cover when one piece misses the deadline and the original does too', () => {
    expect(
      firstCompleteCover(YEAR, [copy('C', 'original', YEAR, 0, 40), copy('C.p1', 'subdivide', H1, 11, 1), copy('C.p2', 'subdivide', H2, 11, 14)]),
    ).toBeNull();
  });

  it('never counts pieces that leave a gap, even when all finish in time', () => {
    const short = { from: '2025-07-02', toExclusive: '2026-01-01' };
    expect(
      firstCompleteCover(YEAR, [copy('C', 'original', YEAR, 0, 40), copy('C.p1', 'subdivide', H1, 11, 1), copy('C.p2', 'subdivide', short, 11, 2)]),
    ).toBeNull();
  });
});

describe('model calls', () => {
  it('charge one call per 20 notes read, the call in flight included', () => {
    const model = { ...SCOUT_MODEL, notesPerCall: 20 };
    expect(callsSpent(model, 100, 50, 10)).toBe(1); // 20 notes
    expect(callsSpent(model, 100, 50, 11)).toBe(2); // 22 notes: the second call has started
    expect(callsSpent(model, 100, 50, 60)).toBe(5); // finished: all 100
    expect(callsSpent(model, 100, 50, 0)).toBe(0); // never ran
  });
});

describe('one replayed run, by hand', () => {
  // No noise (Z = 0): an attempt at n notes takes exactly 2 + 0.0575 n seconds.
  const still: Random = { uniform: () => 0.5, normal: () => 0 };
  const model = { ...SCOUT_MODEL, baseSeconds: 2, secondsPerNote: 0.0575, notesPerCall: 20, overheadSeconds: 1, roundGapSeconds: 1, hedgeDispatchSeconds: 1 };
  // 600 notes over four days, 150 a day: the whole account takes 2 + 34.5 = 36.5 s.
  const day = (d: number) => (readTimePoint(`2025-01-0${d}`) as { ms: number }).ms;
  const times = Float64Array.from({ length: 600 }, (_, i) => day(1 + Math.floor(i / 150)) + (i % 150) * 1000);
  const account: Account = { notes: 600, scope: { from: '2025-01-01', toExclusive: '2025-01-05' }, noteTimes: () => times };
  const run = (policy: Policy) => replayRun(model, policy, account, () => still);

  it('no retry: missing at the 25-s deadline, charged the calls started by then', () => {
    // 25 / 36.5 of 600 notes = 410.96 notes: 21 calls started.
    // Without partial findings it checkpoints at 6.08, 12.17 and 18.25 s (each 100 notes) and flushes at 24 s.
    expect(run({ kind: 'none', deadlineSeconds: 25 })).toMatchObject({ covered: false, seconds: 26, calls: 21, silentGap: false, checkpointWrites: 4 });
  });

  it('serial retry without partial findings: the retry reads the whole scope from 26 s and finishes at 62.5 s', () => {
    // Checkpoints: the original 4; the retry each 100 notes (6.08 s apart) from 32.08 s, the 600th at its finish.
    expect(run({ kind: 'retry', deadlineSeconds: 25, retryDeadlineSeconds: 40 })).toMatchObject({
      covered: true,
      winner: 'retry',
      seconds: 63.5,
      calls: 21 + 30,
      lostCalls: 21,
      checkpointWrites: 4 + 5,
      retriedRest: false,
    });
  });

  it('replicate at 10 s: the replica is as slow, so the run still misses and pays for both', () => {
    // The replica runs from 11 s to the deadline: 14 / 36.5 of 600 = 230.1 notes, 12 calls.
    expect(run({ kind: 'replicate', deadlineSeconds: 25, afterSeconds: 10 })).toMatchObject({ covered: false, seconds: 26, calls: 21 + 12 });
  });

  it('subdivide ×4 at 10 s: four one-day pieces of 150 notes win at 21.625 s', () => {
    // Each piece: 2 + 0.0575 × 150 = 10.625 s from 11 s; 8 calls each. The original ran
    // 21.625 s: 355.5 notes, 18 calls, charged although it lost.
    expect(run({ kind: 'subdivide', deadlineSeconds: 25, afterSeconds: 10, pieces: 4 })).toEqual({
      covered: true,
      winner: 'subdivide',
      seconds: 22.625,
      calls: 4 * 8 + 18,
      lostCalls: 18,
      hedged: true,
      silentGap: false,
      partlyRead: false,
      piecesTile: true,
      // The original at 6.08, 12.17 and 18.25 s (each 100 notes); each piece once, at its 100th note (18.08 s).
      checkpointWrites: 3 + 4,
      maxCheckpointWrites: 3,
      handoverWrites: 0,
      handedOver: false,
      retriedRest: false,
    });
  });
});

describe('checkpoints and the handover, on the SDK schedule, by hand', () => {
  const still: Random = { uniform: () => 0.5, normal: () => 0 };
  const model = { ...SCOUT_MODEL, baseSeconds: 2, secondsPerNote: 0.0575, notesPerCall: 20, overheadSeconds: 1, roundGapSeconds: 1, hedgeDispatchSeconds: 1 };
  const day = (d: number) => (readTimePoint(`2025-01-0${d}`) as { ms: number }).ms;
  const times = Float64Array.from({ length: 600 }, (_, i) => day(1 + Math.floor(i / 150)) + (i % 150) * 1000);
  const account: Account = { notes: 600, scope: { from: '2025-01-01', toExclusive: '2025-01-05' }, noteTimes: () => times };
  const run = (policy: Policy) => replayRun(model, policy, account, () => still);
  const reader = { start: 0, seconds: 36.5, notes: 600, deadline: DEADLINE };

  it('writes every 5 s while partial findings come every 20 notes, then flushes 1 s before the deadline', () => {
    // Partials every 20 / 600 × 36.5 = 1.22 s, so the 5 s decide; the next after 20 s would be 25 s, past the 24-s flush.
    const writes = checkpointWrites(model, reader, DEADLINE, true);
    expect(writes.map((w) => w.at)).toEqual([5, 10, 15, 20, 24]);
    // At 24 s, ⌊600 × 24 / 36.5⌋ = 394 notes read; the findings account for 380 of them.
    expect(writes.at(-1)).toEqual({ at: 24, records: 394, partialNotes: 380, handover: false });
  });

  it('without partial findings, writes after each 100 records once 5 s passed, with no findings', () => {
    // The 100th, 200th and 300th notes are read at 6.08, 12.17 and 18.25 s; the 400th (24.33 s) comes after the flush.
    const writes = checkpointWrites(model, reader, DEADLINE, false);
    expect(writes.map((w) => Number(w.at.toFixed(2)))).toEqual([6.08, 12.17, 18.25, 24]);
    expect(writes.every((w) => w.partialNotes === null)).toBe(true);
  });

  it('writes nothing for a worker that finishes before its first is due (one note, or 4.9 s), and at most the cap', () => {
    expect(checkpointWrites(model, { start: 0, seconds: 2.06, notes: 1, deadline: DEADLINE }, DEADLINE, true)).toEqual([]);
    expect(checkpointWrites(model, { start: 0, seconds: 4.9, notes: 300, deadline: DEADLINE }, DEADLINE, true)).toEqual([]);
    const long = { start: 0, seconds: 1_000, notes: 10_000, deadline: 1_000 };
    expect(checkpointWrites(model, long, 1_000, true).length).toBe(DEFAULT_CHECKPOINT_POLICY.maxWrites);
  });

  it('keeps the whole days the last checkpoint before the instant accounts for, split by the domain', () => {
    const writes = checkpointWrites(model, reader, DEADLINE, true);
    // The 10-s write accounts for 160 notes: day 1 whole (150), note 160 is on day 2.
    expect(prefixAt(account, writes, 11)).toEqual({
      prefix: { from: '2025-01-01', toExclusive: '2025-01-02' },
      rest: { from: '2025-01-02', toExclusive: '2025-01-05' },
      notes: 150,
    });
    // Before 5 s nothing is stored; the 5-s write accounts for 80 notes, no whole day.
    expect(prefixAt(account, writes, 5)).toBeUndefined();
    expect(prefixAt(account, writes, 6)).toBeUndefined();
    expect(prefixAt(account, checkpointWrites(model, reader, DEADLINE, false), 25)).toBeUndefined();
  });

  it('serial retry with partial findings: the retry reads only the two days after the prefix', () => {
    // The flush at 24 s accounts for 380 notes: days 1-2 (300 notes) are the prefix. The retry reads
    // 300 notes from 26 s: 2 + 17.25 = 19.25 s, done at 45.25 s, 15 calls. The original's 21 calls
    // bought the 15 calls' worth of prefix; 6 are lost. Writes: the original 5, the retry at 31, 36, 41 s.
    expect(run({ kind: 'retry', deadlineSeconds: 25, retryDeadlineSeconds: 40, partialFindings: true })).toEqual({
      covered: true,
      winner: 'retry',
      seconds: 46.25,
      calls: 21 + 15,
      lostCalls: 6,
      hedged: true,
      silentGap: false,
      partlyRead: false,
      piecesTile: null,
      checkpointWrites: 5 + 3,
      maxCheckpointWrites: 5,
      handoverWrites: 0,
      handedOver: false,
      retriedRest: true,
    });
  });

  it('holds the model call that would still run at the handover, unless it is the last', () => {
    // A call reads 20 notes: 20 / 600 × 36.5 = 1.2167 s. The first call starting at or after
    // 11 − 1.2167 = 9.783 s is call 10, after note 180, at 9 × 1.2167 = 10.95 s: it would end at
    // 12.17 s, past 11 s, so it waits until 11 + 1.5 = 12.5 s.
    const pause = handoverPause(model, { ...reader, handoverAt: 11 });
    expect(pause?.from).toBeCloseTo(10.95, 9);
    expect(pause?.until).toBe(12.5);
    // 200 notes in 12.2 s: calls of 1.22 s; call 10 (notes 180-200, from 10.98 s) is the last, so it goes.
    expect(handoverPause(model, { start: 0, seconds: 12.2, notes: 200, deadline: DEADLINE, handoverAt: 11 })).toBeUndefined();
    expect(handoverPause(model, reader)).toBeUndefined();
  });

  it('writes the pending findings early when the call starts to wait, once, off the 5-s schedule', () => {
    // Partials at 5 s (80 notes) and 10 s (164 read, 160 accounted); at 10.95 s call 9 reports
    // notes 161-180 and call 10 waits: written at once (the 15-s write would come after the cut).
    const writes = checkpointWrites(model, { ...reader, handoverAt: 11, pause: handoverPause(model, { ...reader, handoverAt: 11 }) }, 11, true);
    expect(writes.map((w) => Number(w.at.toFixed(2)))).toEqual([5, 10, 10.95]);
    expect(writes.map((w) => [w.partialNotes, w.handover])).toEqual([
      [80, false],
      [160, false],
      [180, true],
    ]);
  });

  it('subdivide ×3 at 11 s: the original hands over day 1 at its 10.95-s checkpoint, three one-day pieces read the rest', () => {
    // Pieces of 150 notes from 12 s: 10.625 s each, done at 22.625 s, 8 calls each, writing at 17
    // and 22 s. The original waits from 10.95 s with 180 notes read, 9 calls, none in flight;
    // the findings over 180 notes keep day 1 (150 notes, 8 calls' worth): 1 call lost (10 and
    // 2 before the handover window). It wrote at 5, 10 and 10.95 s, the last early.
    expect(run({ kind: 'subdivide', deadlineSeconds: 25, afterSeconds: 11, pieces: 3, partialFindings: true })).toEqual({
      covered: true,
      winner: 'subdivide',
      seconds: 23.625,
      calls: 9 + 3 * 8,
      lostCalls: 1,
      hedged: true,
      silentGap: false,
      partlyRead: false,
      piecesTile: true,
      checkpointWrites: 3 + 3 * 2,
      maxCheckpointWrites: 3,
      handoverWrites: 1,
      handedOver: true,
      retriedRest: false,
    });
  });

  it('hands nothing over when the rest has fewer days than pieces: the race over the whole scope', () => {
    // At 11 s the rest is 3 days, too few for 4 pieces: as without partial findings.
    const withPartials = run({ kind: 'subdivide', deadlineSeconds: 25, afterSeconds: 11, pieces: 4, partialFindings: true });
    const without = run({ kind: 'subdivide', deadlineSeconds: 25, afterSeconds: 11, pieces: 4 });
    expect(withPartials.handedOver).toBe(false);
    // The pieces win at 22.625 s either way. The original without partial findings read
    // 600 × 22.625 / 36.5 = 371.9 notes (19 calls); with them it waited 10.95-12.5 s in the
    // handover window: 600 × 21.075 / 36.5 = 346.4 notes, 18 calls.
    expect([without.calls, withPartials.calls]).toEqual([4 * 8 + 19, 4 * 8 + 18]);
    const same = { checkpointWrites: 0, maxCheckpointWrites: 0, handoverWrites: 0, calls: 0, lostCalls: 0 };
    expect({ ...withPartials, ...same }).toEqual({ ...without, ...same });
  });
});

describe('the calibration', () => {
  it(`reproduces Scout's figures with seed 15 on ${SCOUT.runs} runs, within ±0.5 points and ±3 s`, () => {
    const figures = calibrationFigures(SCOUT_MODEL, 15, SCOUT.runs);
    // ±0.5 points of 2,340 runs is ±11.7 runs around 143.
    expect(Math.abs(figures.missedRuns - SCOUT.missedRuns)).toBeLessThanOrEqual(11);
    expect(Math.abs(figures.missingAfterRetry - SCOUT.missingAfterRetry)).toBeLessThanOrEqual(TOLERANCE.share);
    expect(Math.abs(figures.p95NoRetry - SCOUT.p95NoRetrySeconds)).toBeLessThanOrEqual(TOLERANCE.seconds);
    expect(Math.abs(figures.p95Retry - SCOUT.p95RetrySeconds)).toBeLessThanOrEqual(TOLERANCE.seconds);
  });

  it('holds for the model itself, on 20,000 runs of another seed', () => {
    const figures = calibrationFigures(SCOUT_MODEL, 16, 20_000);
    expect(Math.abs(figures.missedShare - SCOUT.missedRuns / SCOUT.runs)).toBeLessThanOrEqual(TOLERANCE.share);
    expect(Math.abs(figures.missingAfterRetry - SCOUT.missingAfterRetry)).toBeLessThanOrEqual(TOLERANCE.share);
    expect(Math.abs(figures.p95Retry - SCOUT.p95RetrySeconds)).toBeLessThanOrEqual(TOLERANCE.seconds);
  });
});

describe('subdivide replays', () => {
  it('never report a run covered with part of its scope unread (whole-scope pieces and the handover)', () => {
    const accounts = accountsFor(SCOUT_MODEL, 15, 400);
    for (const [pieces, partialFindings] of [
      [2, false],
      [5, false],
      [8, false],
      [4, true],
      [8, true],
    ] as const) {
      const results = replay(SCOUT_MODEL, { kind: 'subdivide', deadlineSeconds: DEADLINE, afterSeconds: 6, pieces, partialFindings }, 15, accounts);
      expect(results.filter((r) => r.winner === 'subdivide').length).toBeGreaterThan(0);
      expect(summarise(results)).toMatchObject({ silentGaps: 0, untiled: 0 });
      expect(summarise(results).tilingChecked).toBe(results.filter((r) => r.hedged).length);
      if (partialFindings) expect(summarise(results).handovers).toBeGreaterThan(0);
    }
  });
});

describe('percentiles and the choice of the best setting', () => {
  it('takes the nearest rank', () => {
    expect(percentile([5, 1, 4, 2, 3], 0.5)).toBe(3);
    expect(
      percentile(
        Array.from({ length: 100 }, (_, i) => i + 1),
        0.95,
      ),
    ).toBe(95);
  });

  const summary = (missingShare: number, callsPerRun: number): Summary => ({
    runs: 1000,
    missing: Math.round(missingShare * 1000),
    missingShare,
    silentGaps: 0,
    p50: 9,
    p95: 26,
    callsPerRun,
    lostCallsPerRun: 0,
    hedgedShare: 0.1,
    partlyRead: 0,
    tilingChecked: 0,
    untiled: 0,
    checkpointWritesPerRun: 0,
    maxCheckpointWrites: 0,
    handoverWrites: 0,
    maxHandoverWrites: 0,
    handovers: 0,
    retriedRest: 0,
  });
  const policy = (afterSeconds: number): Policy => ({ kind: 'replicate', deadlineSeconds: DEADLINE, afterSeconds });

  it('prefers the whole goal, then the cheapest that meets the missing goal, then the fewest missing', () => {
    const whole = [
      { policy: policy(5), summary: summary(0.013, 11.4) },
      { policy: policy(6), summary: summary(0.01, 11.5) },
      { policy: policy(7), summary: summary(0.02, 10) },
    ];
    expect(best(whole, 10).policy).toEqual(policy(6));
    const costly = [
      { policy: policy(5), summary: summary(0.013, 16) },
      { policy: policy(6), summary: summary(0.01, 17) },
      { policy: policy(7), summary: summary(0.02, 10) },
    ];
    expect(best(costly, 10).policy).toEqual(policy(5));
    const short = [
      { policy: policy(5), summary: summary(0.03, 16) },
      { policy: policy(6), summary: summary(0.05, 10) },
    ];
    expect(best(short, 10).policy).toEqual(policy(5));
    expect(GOAL.callsRatio).toBe(1.15);
  });
});
