import type { PlanWarning } from '../contract';
import type { WorkerCatalog } from './catalog';

/** A subtask as capacity planning sees it: its kind, its deadline, and the request field to change. */
export interface CapacityDemand {
  readonly worker: string;
  readonly deadlineSeconds: number;
  /** The request path of its `deadlineSeconds`: `split.deadlineSeconds`, `subtasks.3.deadlineSeconds`. */
  readonly path: string;
}

/**
 * Kinds whose capacity cannot finish their subtasks by their deadlines. A kind runs at most
 * `capacity[kind]` subtasks at once (the deployment's `maxConcurrency × batchSize`), each for about
 * the `typicalSeconds` the kind declares, so its subtasks run in waves: taken earliest deadline
 * first, the k-th (0-based) ends after ⌈(k + 1) / capacity⌉ × typicalSeconds. One `capacity_short`
 * warning per kind that has any subtask ending past its deadline; kinds without a declared
 * duration or a known capacity are not judged.
 *
 * @example
 * capacityWarnings(twoHundredTwoSecondSubtasks, catalog, { 'ticket-triage': 25 })
 * // [{ code: 'capacity_short', worker: 'ticket-triage', path: 'split.deadlineSeconds',
 * //    message: '200 ticket-triage subtasks, 25 at a time of about 2 s each, take 8 waves (16 s): 75 cannot finish by their 10 s deadline' }]
 */
export const capacityWarnings = (demands: readonly CapacityDemand[], catalog: WorkerCatalog, capacity: Readonly<Record<string, number>>): PlanWarning[] => {
  const byKind = new Map<string, CapacityDemand[]>();
  for (const demand of demands) byKind.set(demand.worker, [...(byKind.get(demand.worker) ?? []), demand]);
  return [...byKind].flatMap(([worker, list]): PlanWarning[] => {
    const typical = catalog.get(worker)?.typicalSeconds;
    const slots = capacity[worker];
    if (typical === undefined || slots === undefined || slots < 1) return [];
    const ordered = [...list].sort((a, b) => a.deadlineSeconds - b.deadlineSeconds);
    const late = ordered.filter((d, k) => Math.ceil((k + 1) / slots) * typical > d.deadlineSeconds);
    const [first] = late;
    if (!first) return [];
    const waves = Math.ceil(ordered.length / slots);
    const deadlines = new Set(late.map((d) => d.deadlineSeconds));
    const by = deadlines.size === 1 ? `their ${first.deadlineSeconds} s deadline` : 'their deadlines';
    return [
      {
        code: 'capacity_short',
        worker,
        path: first.path,
        message:
          `${ordered.length} ${worker} subtasks, ${slots} at a time of about ${typical} s each, take ${waves} ${waves === 1 ? 'wave' : 'waves'} ` +
          `(${waves * typical} s): ${late.length} cannot finish by ${by}`,
      },
    ];
  });
};
