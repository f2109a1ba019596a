import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Manifest, type Checkpoint, type Dimension, type DispatchedSubtask, type Outcome, type Scope, type Universe } from '../../lib/contract';
import { algebraFor, checkpointIssues, planNextRound, reconcile, resumedLine } from '../../lib/domain';
import { unitsOf, unitsOfAll } from './support/scope-units';

/**
 * Properties of checkpoints over random runs of one line of work, in all three dimensions: each
 * attempt reads random pieces of what it was sent, checkpoints now and then (some with partial
 * findings), may crash (a new generation resumes, while the old one keeps trying to write), and
 * ends at its deadline. Its retry is planned by `planNextRound`, the one planner. Expected
 * values are sets of day numbers, id numbers and (file, line) pairs computed here, not by the
 * domain's algebra.
 */
const RUNS = { numRuns: 300 };
const DAY = 86_400_000;

const day = (n: number): string => new Date(Date.UTC(2025, 0, 1) + n * DAY).toISOString().slice(0, 10);

/** A universe of `size` units and a scope in it; `piece(a, b)` is the scope of units `[a, b)`. */
const space = (dimension: Dimension, size: number) => {
  if (dimension === 'time') {
    return {
      universe: { dimension, from: day(0), toExclusive: day(size) } as Universe,
      piece: (a: number, b: number): Scope => ({ from: day(a), toExclusive: day(b) }),
    };
  }
  if (dimension === 'ids') {
    const id = (k: number) => `id-${String(k).padStart(3, '0')}`;
    return {
      universe: { dimension, ids: Array.from({ length: size }, (_, k) => id(k)) } as Universe,
      piece: (a: number, b: number): Scope => ({ ids: Array.from({ length: b - a }, (_, k) => id(a + k)) }),
    };
  }
  return {
    universe: { dimension, files: [{ path: 'src/a.ts', lines: [[1, size]] }] } as Universe,
    piece: (a: number, b: number): Scope => ({ files: [{ path: 'src/a.ts', lines: [[a + 1, b]] }] }),
  };
};

type Step = { op: 'read'; at: number; length: number } | { op: 'checkpoint'; partial: boolean } | { op: 'crash' } | { op: 'stale' };

const step = fc.oneof(
  fc.record({ op: fc.constant('read' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ op: fc.constant('checkpoint' as const), partial: fc.boolean() }),
  fc.record({ op: fc.constant('crash' as const) }),
  fc.record({ op: fc.constant('stale' as const) }),
);

/**
 * One attempt until its deadline against a model of the ledger's rule: a checkpoint lands only
 * from the current generation and only when it grows inside the assignment. Reads are sequential
 * from where the attempt resumed (as a kind with partial findings reads), or scattered.
 */
const runAttempt = (dimension: Dimension, subtask: DispatchedSubtask, piece: (a: number, b: number) => Scope, steps: readonly Step[], sequential: boolean) => {
  const algebra = algebraFor(dimension);
  const scope = algebra.normalise(subtask.assigned);
  const [lo, hi] = boundsOf(subtask.assigned);
  let generation = 1;
  let stored: Checkpoint | undefined;
  let sequence = 0;
  let read: Scope[] = [];
  let reach = lo;
  const staleSeen: number[] = [];
  const landed: Array<{ writer: number; current: number }> = [];
  for (const s of steps) {
    if (s.op === 'read') {
      const [a, b] = sequential ? [reach, Math.min(hi, reach + s.length)] : [lo + (s.at % (hi - lo)), Math.min(hi, lo + (s.at % (hi - lo)) + s.length)];
      if (a >= b) continue;
      reach = Math.max(reach, b);
      read = algebra.toScopes(
        algebra.union(read.length === 0 ? algebra.difference(scope, scope) : algebra.normalise(read[0]!), algebra.normalise(piece(a, b))),
      );
      read = algebra.toScopes(read.map((r) => algebra.normalise(r)).reduce((x, y) => algebra.union(x, y)));
    } else if (s.op === 'checkpoint' || s.op === 'stale') {
      const writer = s.op === 'stale' ? generation - 1 : generation;
      if (writer < 1) continue;
      const next: Checkpoint = {
        generation: writer,
        sequence: sequence + 1,
        writtenAt: '2025-06-01T00:00:00Z',
        covered: read,
        observed: { ids: [], recordCount: unitsOfAll(read).size },
        sources: [],
        sourcesReached: 0,
        usage: { modelCalls: 0, estimatedCost: 0 },
        ...(s.op === 'checkpoint' && s.partial && read.length > 0
          ? { partial: { covered: read, observed: { ids: [], recordCount: 0 }, findings: { units: unitsOfAll(read).size } } }
          : {}),
      };
      // The ledger's condition: the claim's generation is the subtask's current one.
      if (writer !== generation) {
        staleSeen.push(writer);
        continue;
      }
      if (checkpointIssues(dimension, subtask.assigned, stored, next).length > 0) continue;
      landed.push({ writer, current: generation });
      stored = next;
      sequence = next.sequence;
    } else {
      // A lost lease: the next generation resumes from the stored checkpoint's partial findings.
      generation += 1;
      read = stored?.partial?.covered ?? [];
      reach = lo + (read.length === 0 ? 0 : unitsOfAll(read).size);
    }
  }
  return { stored, staleSeen, generation, landed };
};

/** `[lo, hi)` unit numbers of a scope built by `piece`. */
const boundsOf = (scope: Scope): [number, number] => {
  if ('from' in scope)
    return [
      Date.parse(`${scope.from}T00:00:00Z`) / DAY - Date.UTC(2025, 0, 1) / DAY,
      Date.parse(`${scope.toExclusive}T00:00:00Z`) / DAY - Date.UTC(2025, 0, 1) / DAY,
    ];
  if ('ids' in scope) {
    const ks = scope.ids.map((id) => Number(id.slice(3)));
    return [Math.min(...ks), Math.max(...ks) + 1];
  }
  const [[a, b]] = scope.files[0]!.lines! as [[number, number]];
  return [a - 1, b];
};

describe('checkpoint properties', () => {
  for (const dimension of ['time', 'ids', 'paths'] as const) {
    it(`${dimension}: prefixes and the rest tile the scope, no gap, no overlap; no stale generation's checkpoint lands`, () => {
      let resumed = 0;
      fc.assert(
        fc.property(
          fc.integer({ min: 2, max: 40 }),
          fc.array(fc.array(step, { maxLength: 12 }), { minLength: 1, maxLength: 3 }),
          fc.boolean(),
          (size, attempts, sequential) => {
            const { universe, piece } = space(dimension, size);
            const origin: DispatchedSubtask = { id: 'S', worker: 'w', round: 1, questionIds: [], required: false, assigned: piece(0, size) };
            let manifest = Manifest.parse({ universe, subtasks: [origin], policy: { retry: { timed_out: 3, invalid: 0, empty: 0 }, maxRounds: 5 } });
            const outcomes: Outcome[] = [];
            let current = origin;
            for (const steps of attempts) {
              const { stored, staleSeen, generation, landed } = runAttempt(dimension, current, piece, steps, sequential);
              if (stored !== undefined) expect(stored.generation).toBeLessThanOrEqual(generation);
              expect(staleSeen.every((g) => g < generation)).toBe(true);
              expect(landed.filter((w) => w.writer !== w.current)).toEqual([]);
              outcomes.push({
                subtaskId: current.id,
                state: 'timed_out',
                observed: null,
                sources: [],
                sourcesReached: 0,
                usage: { modelCalls: 0, estimatedCost: 0 },
                refusals: [],
                ...(stored ? { checkpoint: stored } : {}),
              });
              const [retry] = planNextRound(manifest, outcomes);
              if (retry === undefined) break;
              manifest = Manifest.parse({ ...manifest, subtasks: [...manifest.subtasks, retry] });
              current = retry;
              // prefix ∪ rest = scope and prefix ∩ rest = ∅, counted in units here.
              const prefix = unitsOfAll(retry.lineage?.kind === 'retry' ? (retry.lineage.prefix ?? []) : []);
              if (prefix.size > 0) resumed += 1;
              const rest = unitsOf(retry.assigned);
              const whole = unitsOf(origin.assigned);
              expect([...prefix].filter((u) => rest.has(u))).toEqual([]);
              expect(new Set([...prefix, ...rest])).toEqual(whole);
            }
            const byId = new Map(outcomes.map((o) => [o.subtaskId, o]));
            const line = resumedLine(manifest.subtasks, (id) => byId.get(id));
            expect(line?.problems ?? []).toEqual([]);
            expect(reconcile(manifest, outcomes).problems.filter((p) => p.code === 'assignment_gap' || p.code === 'assignment_overlap')).toEqual([]);
          },
        ),
        RUNS,
      );
      // The generator does reach the interesting case: retries sent only a rest.
      expect(resumed).toBeGreaterThan(RUNS.numRuns / 10);
    });
  }
});
