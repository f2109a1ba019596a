/**
 * The Scout replay: a discrete-event simulation, on a simulated clock, of Scout's CRM
 * worker under four policies: no retry, one serial retry, a `replicate` hedge and a `subdivide`
 * hedge. The model (bench/scout/model.ts) is calibrated to Scout's run-level figures first, and
 * the calibration is printed beside them; then the hedges' thresholds (and piece counts) are
 * swept, and the policies are printed side by side: share of runs missing CRM, silent gaps (runs
 * reported covered with part of the scope unread; must be 0), p50 and p95 run latency, model
 * calls per run and their ratio to no retry. The chosen settings are confirmed on ten times as
 * many fresh runs. docs/scout-replay.md explains the model and the figures.
 *
 * `npm run bench -- scout`; `SCOUT_SEED` (printed) and `SCOUT_RUNS` (default 2,340, Scout's run
 * count) replay other runs. No timing is measured: every figure is simulated time.
 */
import { pathToFileURL } from 'node:url';
import { calibrationFigures, calibrationMisses, NO_RETRY, SERIAL_RETRY } from './scout/calibrate';
import { SCOUT, SCOUT_MODEL } from './scout/model';
import { MAX_CHECKPOINT_BYTES } from '../lib/ledger/checkpoints';
import { DEFAULT_CHECKPOINT_POLICY, HANDOVER_WRITES } from '../lib/workers/checkpointer';
import { describePolicy, HANDOVER_EXTRA_REQUESTS, type Policy } from './scout/policies';
import { accountsFor, replay, summarise, type Summary } from './scout/replay';

const SEED = Number(process.env.SCOUT_SEED ?? 15);
const RUNS = Number(process.env.SCOUT_RUNS ?? SCOUT.runs);
/** Accounts for the model's own rates: large enough that sampling error is a tenth of a point. */
const LARGE = 50_000;

/** The goal for a hedge: beat the serial retry on both axes (fewer misses, p95 ≤ 30 s) at ≤ 1.15× the calls of no retry. */
export const GOAL = { missingShare: SCOUT.missingAfterRetry, p95Seconds: 30, callsRatio: 1.15 } as const;

/**
 * What checkpoints and the handover must reach, on top of the goal: the figures a handover at
 * the read position (no checkpoint interval) reached in this replay, with 0 silent gaps.
 */
export const TARGET = { missingShare: 0.012, p95Seconds: 21, callsRatio: 1.15 } as const;

/** The goal or target a setting is judged by. */
type Goal = { readonly missingShare: number; readonly p95Seconds: number; readonly callsRatio: number };

const THRESHOLDS = Array.from({ length: 17 }, (_, i) => i + 3); // 3..19 s
const PIECES = [2, 3, 4, 6, 8];

const pct = (share: number): string => `${(share * 100).toFixed(2)}%`;
const secs = (value: number): string => `${value.toFixed(1)} s`;

const meetsGoal = (s: Summary, baselineCalls: number, goal: Goal = GOAL): boolean =>
  s.missingShare <= goal.missingShare && s.p95 <= goal.p95Seconds && s.callsPerRun / baselineCalls <= goal.callsRatio;

const meetsTarget = (s: Summary, baselineCalls: number): boolean => meetsGoal(s, baselineCalls, TARGET) && s.silentGaps === 0;

/**
 * The best setting of a hedge: among those meeting the whole goal, the fewest missing runs;
 * else among those meeting the missing and p95 goals (beating the serial retry on both), the
 * fewest calls; else the fewest missing runs at any cost.
 */
export const best = (swept: readonly { policy: Policy; summary: Summary }[], baselineCalls: number, goal: Goal = GOAL) => {
  const fewestMissing = (a: { summary: Summary }, b: { summary: Summary }) =>
    a.summary.missing - b.summary.missing || a.summary.callsPerRun - b.summary.callsPerRun;
  const fewestCalls = (a: { summary: Summary }, b: { summary: Summary }) =>
    a.summary.callsPerRun - b.summary.callsPerRun || a.summary.missing - b.summary.missing;
  const all = swept.filter(({ summary }) => meetsGoal(summary, baselineCalls, goal)).sort(fewestMissing);
  if (all[0]) return { ...all[0], why: 'meets the whole goal with the fewest missing' };
  const beatsRetry = swept.filter(({ summary }) => summary.missingShare <= goal.missingShare && summary.p95 <= goal.p95Seconds).sort(fewestCalls);
  if (beatsRetry[0]) return { ...beatsRetry[0], why: 'the fewest calls among those meeting the missing and p95 goals' };
  const fallback = [...swept].sort(fewestMissing)[0];
  if (!fallback) throw new Error('nothing was swept');
  return { ...fallback, why: 'nothing meets the missing goal; the fewest missing' };
};

const row = (label: string, s: Summary, baselineCalls: number): string =>
  [
    label.padEnd(46),
    `${pct(s.missingShare).padStart(7)} (${String(s.missing).padStart(4)})`,
    String(s.silentGaps).padStart(6),
    secs(s.p50).padStart(8),
    secs(s.p95).padStart(8),
    s.callsPerRun.toFixed(2).padStart(9),
    `${(s.callsPerRun / baselineCalls).toFixed(3)}×`.padStart(8),
    s.lostCallsPerRun.toFixed(2).padStart(6),
    pct(s.hedgedShare).padStart(8),
    (meetsGoal(s, baselineCalls) ? 'yes' : 'no').padStart(5),
    s.checkpointWritesPerRun.toFixed(2).padStart(7),
  ].join(' ');

const HEADER = `${'policy'.padEnd(46)} ${'missing CRM'.padStart(14)} ${'silent'.padStart(6)} ${'p50'.padStart(8)} ${'p95'.padStart(8)} ${'calls/run'.padStart(9)} ${'vs none'.padStart(8)} ${'lost'.padStart(6)} ${'hedged'.padStart(8)} ${'goal'.padStart(5)} ${'ckpt/run'.padStart(7)}`;

const printCalibration = (): void => {
  const m = SCOUT_MODEL;
  console.log(
    `model: notes per account lognormal (median ${Math.round(Math.exp(m.notesMu))}, σ ${m.notesSigma}); an attempt takes ` +
      `(${m.baseSeconds} s + ${m.secondsPerNote} s × notes) × e^(${m.noiseSigma}·Z), Z fresh per attempt; ` +
      `1 model call per ${m.notesPerCall} notes read; notes skewed to recent (recency ${m.recency}); run overhead ${m.overheadSeconds} s, ` +
      `retry dispatched ${m.roundGapSeconds} s after the deadline, hedge copies start ${m.hedgeDispatchSeconds} s after the threshold`,
  );
  const replayed = calibrationFigures(m, SEED, RUNS);
  const large = calibrationFigures(m, SEED + 1, LARGE);
  const ok = (misses: ReturnType<typeof calibrationMisses>) => (Object.values(misses).every((v) => Math.abs(v) <= 1) ? 'within' : 'OUTSIDE');
  console.log(`\ncalibration (Scout → this replay of ${RUNS} runs | the model on ${LARGE.toLocaleString('en')} runs, seed ${SEED + 1}):`);
  console.log(
    `  runs over the ${SCOUT.deadlineSeconds}-s deadline, no retry   ${pct(SCOUT.missedRuns / SCOUT.runs)} (${SCOUT.missedRuns}/${SCOUT.runs}) → ${pct(replayed.missedShare)} (${replayed.missedRuns}/${RUNS}) | ${pct(large.missedShare)}`,
  );
  console.log(
    `  still missing after a ${SCOUT.retryDeadlineSeconds}-s retry       ${pct(SCOUT.missingAfterRetry)} → ${pct(replayed.missingAfterRetry)} | ${pct(large.missingAfterRetry)}`,
  );
  console.log(`  p95 run latency, no retry          ${secs(SCOUT.p95NoRetrySeconds)} → ${secs(replayed.p95NoRetry)} | ${secs(large.p95NoRetry)}`);
  console.log(`  p95 run latency, serial retry      ${secs(SCOUT.p95RetrySeconds)} → ${secs(replayed.p95Retry)} | ${secs(large.p95Retry)}`);
  console.log(`  ${ok(calibrationMisses(replayed))} ±0.5 points and ±3 s here; ${ok(calibrationMisses(large))} on the large sample`);
};

export async function run(): Promise<void> {
  console.log(`scout seed ${SEED} (SCOUT_SEED=${SEED} replays these runs); ${RUNS} runs (SCOUT_RUNS), simulated time`);
  printCalibration();

  const model = SCOUT_MODEL;
  const accounts = accountsFor(model, SEED, RUNS);
  const measure = (policy: Policy) => ({ policy, summary: summarise(replay(model, policy, SEED, accounts)) });
  const none = measure(NO_RETRY);
  const baseline = none.summary.callsPerRun;
  const deadlineSeconds = SCOUT.deadlineSeconds;
  // The CRM kind as built for checkpoints: it declares partial findings (after every model call).
  const partialFindings = true;
  const retry = measure({ ...SERIAL_RETRY, partialFindings });
  const wholeRetry = measure(SERIAL_RETRY);
  const replicas = THRESHOLDS.map((afterSeconds) => measure({ kind: 'replicate', deadlineSeconds, afterSeconds, partialFindings }));
  const subdivide = (partial: boolean) =>
    PIECES.flatMap((pieces) =>
      THRESHOLDS.map((afterSeconds) => measure({ kind: 'subdivide', deadlineSeconds, afterSeconds, pieces, partialFindings: partial })),
    );
  const handovers = subdivide(true);
  const races = subdivide(false);

  console.log(`\nsweep: missing CRM / calls vs no retry, by threshold T (hedge copies share the ${deadlineSeconds}-s deadline; subdivide hands over)`);
  console.log(`${'T'.padStart(4)} ${'replicate'.padStart(16)} ${PIECES.map((k) => `subdivide ×${k}`.padStart(16)).join(' ')}`);
  THRESHOLDS.forEach((t, i) => {
    const cell = (s: Summary) => `${pct(s.missingShare)} ${(s.callsPerRun / baseline).toFixed(2)}×`.padStart(16);
    const subdivideCells = PIECES.map((_, k) => cell((handovers[k * THRESHOLDS.length + i] as { summary: Summary }).summary));
    console.log(`${String(t).padStart(3)}s ${cell((replicas[i] as { summary: Summary }).summary)} ${subdivideCells.join(' ')}`);
  });

  const bestReplicate = best(replicas, baseline);
  const bestHandover = best(handovers, baseline, TARGET);
  const bestRace = best(races, baseline);
  const once = accounts.reduce((sum, a) => sum + Math.ceil(a.notes / model.notesPerCall), 0) / accounts.length;
  const chosen: { label: string; policy: Policy }[] = [
    { label: describePolicy(NO_RETRY), policy: NO_RETRY },
    { label: `${describePolicy(retry.policy)}, rest only`, policy: retry.policy },
    { label: `${describePolicy(bestReplicate.policy)} (its best)`, policy: bestReplicate.policy },
    { label: `${describePolicy(bestHandover.policy)}, handover (its best)`, policy: bestHandover.policy },
    { label: `no partial findings: ${describePolicy(SERIAL_RETRY).replace('serial ', '')}`, policy: SERIAL_RETRY },
    { label: `no partial findings: ${describePolicy(bestRace.policy)}`, policy: bestRace.policy },
  ];
  const byPolicy = new Map<Policy, Summary>([
    [NO_RETRY, none.summary],
    [retry.policy, retry.summary],
    [SERIAL_RETRY, wholeRetry.summary],
    [bestReplicate.policy, bestReplicate.summary],
    [bestHandover.policy, bestHandover.summary],
    [bestRace.policy, bestRace.summary],
  ]);

  console.log(
    `\npolicies side by side (${RUNS} runs, seed ${SEED}; goal: ≤${pct(GOAL.missingShare)} missing, p95 ≤ ${GOAL.p95Seconds} s, ≤${GOAL.callsRatio}× the calls of no retry)`,
  );
  console.log(HEADER);
  for (const { label, policy } of chosen) console.log(row(label, byPolicy.get(policy) as Summary, baseline));
  console.log(
    `${'(every account read once, no retry)'.padEnd(46)} ${' '.repeat(14)} ${' '.repeat(6)} ${' '.repeat(8)} ${' '.repeat(8)} ${once.toFixed(2).padStart(9)} ${`${(once / baseline).toFixed(3)}×`.padStart(8)}`,
  );
  const checked = [...handovers, ...races].map(({ summary }) => summary);
  console.log(
    `checkTiling on every started subdivide in the sweep: ${checked.reduce((n, c) => n + c.tilingChecked, 0)} runs checked, ` +
      `${checked.reduce((n, c) => n + c.untiled, 0)} whose pieces (and handed-over prefix) did not tile the scope (must be 0); ` +
      `silent gaps in the whole sweep: ${[retry, wholeRetry, ...replicas, ...checked.map((summary) => ({ summary }))].reduce((n, { summary }) => n + summary.silentGaps, 0)} (must be 0)`,
  );
  printWriteCost(byPolicy, chosen, bestHandover.summary);

  const fresh = accountsFor(model, SEED + 2, RUNS * 10);
  console.log(`\nconfirmed on ${(RUNS * 10).toLocaleString('en')} fresh runs (seed ${SEED + 2}):`);
  console.log(HEADER);
  const freshNone = summarise(replay(model, NO_RETRY, SEED + 2, fresh));
  let freshHandover = freshNone;
  for (const { label, policy } of chosen) {
    const summary = policy === NO_RETRY ? freshNone : summarise(replay(model, policy, SEED + 2, fresh));
    if (policy === bestHandover.policy) freshHandover = summary;
    console.log(row(label, summary, freshNone.callsPerRun));
  }
  console.log(`  replicate: ${describePolicy(bestReplicate.policy)}, ${bestReplicate.why}`);
  console.log(`  subdivide with handover: ${describePolicy(bestHandover.policy)}, ${bestHandover.why} (judged against the target)`);
  console.log(`  subdivide without partial findings (no handover): ${describePolicy(bestRace.policy)}, ${bestRace.why}`);
  console.log(
    `  reading every account once costs ${(once / baseline).toFixed(2)}× the calls of no retry, which gives up on the slow accounts at the deadline: any policy that covers them pays at least that.`,
  );
  const verdict = (s: Summary, calls: number) =>
    `${pct(s.missingShare)} missing, p95 ${secs(s.p95)}, ${(s.callsPerRun / calls).toFixed(3)}× the calls, ${s.silentGaps} silent gaps: ${meetsTarget(s, calls) ? 'meets' : 'MISSES'}`;
  console.log(
    `\ntarget for checkpoints and handover (≤${pct(TARGET.missingShare)} missing, p95 ≤ ${TARGET.p95Seconds} s, ≤${TARGET.callsRatio}× the calls of no retry, 0 silent gaps), ` +
      `${describePolicy(bestHandover.policy)} with handover:`,
  );
  console.log(`  seed ${SEED}, ${RUNS} runs: ${verdict(bestHandover.summary, baseline)}`);
  console.log(`  ${(RUNS * 10).toLocaleString('en')} fresh runs (seed ${SEED + 2}): ${verdict(freshHandover, freshNone.callsPerRun)}`);
  const r = bestReplicate.summary;
  const d = bestRace.summary;
  const h = bestHandover.summary;
  console.log('\nwhy:');
  console.log(
    `  replicate: slowness here comes from size (an account's notes), which a replica shares; only the per-attempt noise is new, so even ` +
      `${describePolicy(bestReplicate.policy)} (${pct(r.hedgedShare)} of runs hedged) ${pct(r.missingShare)} still miss, at ${(r.callsPerRun / baseline).toFixed(2)}× the calls.`,
  );
  console.log(
    `  subdivide without a handover: the pieces re-read every note the original has read, and the original keeps reading until they win: ` +
      `${d.lostCallsPerRun.toFixed(2)} of its ${d.callsPerRun.toFixed(2)} calls per run go to copies that lost, against ${none.summary.lostCallsPerRun.toFixed(2)} with no retry.`,
  );
  console.log(
    `  subdivide with the handover: the original's findings are written at the cut with no model call in flight (the handover window), and the pieces split only the rest, ` +
      `so ${h.lostCallsPerRun.toFixed(2)} calls per run are lost (the partly read day at the cut, and runs still missing); ${describePolicy(bestHandover.policy)} comes to ${pct(h.missingShare)} missing, p95 ${secs(h.p95)}, ` +
      `${(h.callsPerRun / baseline).toFixed(2)}× the calls.`,
  );
}

/**
 * The write cost of the checkpoints and the handover: what each chosen policy writes per run,
 * the most one subtask wrote against the SDK's cap, and the handover's requests.
 */
const printWriteCost = (byPolicy: ReadonlyMap<Policy, Summary>, chosen: readonly { label: string; policy: Policy }[], handover: Summary): void => {
  const p = DEFAULT_CHECKPOINT_POLICY;
  console.log(
    `\ncheckpoint writes (the SDK's DEFAULT_CHECKPOINT_POLICY: due after ${p.everyRecords} new records or new partial findings and ${p.everyMs / 1000} s, ` +
      `whichever comes later; flushed ${p.flushBeforeDeadlineMs / 1000} s before the deadline; at most ${p.maxWrites} per subtask), ` +
      `each one conditional UpdateItem of the subtask item (at most ${MAX_CHECKPOINT_BYTES / 1024} KiB of checkpoint; 2-4 WCU for a few-KiB item):`,
  );
  for (const { label, policy } of chosen) {
    const s = byPolicy.get(policy) as Summary;
    console.log(`  ${label.padEnd(46)} ${s.checkpointWritesPerRun.toFixed(2).padStart(5)} writes per run, at most ${s.maxCheckpointWrites} by one subtask`);
  }
  const share = handover.handovers / handover.runs;
  console.log(
    `  handover: ${handover.handovers} of ${handover.runs} runs (${pct(share)}) handed over, ${HANDOVER_EXTRA_REQUESTS} extra requests per hedge for the mark (handedOverAt, ` +
      `bound to the original's generation and checkpoint sequence, rides on the hedge's start transaction)`,
  );
  console.log(
    `  handover window (the claim's handoverDueAt, on a subdivide-hedged subtask of a kind with partial findings: from ${p.handoverWindowMs / 1000} s before the hedge is due ` +
      `to ${p.handoverHoldMs / 1000} s after, a model call that would still run at the cut waits, and pending findings are written at once when it starts to wait ` +
      `and ${p.flushBeforeHandoverMs / 1000} s before the cut): ${(handover.handoverWrites / Math.max(1, handover.handovers)).toFixed(2)} early writes per handed-over run ` +
      `(${(handover.handoverWrites / handover.runs).toFixed(2)} per run), at most ${handover.maxHandoverWrites} by one subtask (the SDK's cap: ${HANDOVER_WRITES}), within its ${p.maxWrites}; ` +
      `each is one checkpoint write as above`,
  );
};

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await run();
}
