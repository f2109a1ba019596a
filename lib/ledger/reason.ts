/**
 * Reasons for subtasks that ended without a result of their own, rendered from what the subtask
 * item knows (claims, generation, delivery failures, how the run ended). They are rendered when
 * read rather than stored: the facts are written by the seal or close itself, and after that the
 * item never changes again, so the text is stable and needs no read-modify-write to produce.
 */
import type { LateItem, StoredSubtaskItem as SubtaskItem } from './items';

/** Results refused after the subtask ended, as the reason needs them: who sent one, and when. */
export type LateResults = ReadonlyArray<Pick<LateItem, 'generation' | 'receivedAt'>>;
import { clipReason, plural } from './size';

const deliveryNote = (item: SubtaskItem): string | undefined => {
  const failure = item.lastDeliveryFailure;
  if (failure === undefined) return undefined;
  const dead = failure.deadLettered ? '; message dead-lettered' : '';
  return `${plural(failure.receiveCount, 'delivery', 'deliveries')} failed (last with ${failure.errorName})${dead}`;
};

/** `its result arrived late at …` for the first late result of the claiming generation, or of any. */
const lateNote = (item: SubtaskItem, late: LateResults): string | undefined => {
  const first = [...late].sort((a, b) => a.receivedAt.localeCompare(b.receivedAt));
  const own = first.find((result) => result.generation === item.generation);
  if (own) return `its result arrived late at ${own.receivedAt} and is kept as late evidence`;
  const other = first[0];
  return other && `a result of generation ${other.generation} arrived late at ${other.receivedAt} and is kept as late evidence`;
};

const claimNote = (item: SubtaskItem, unclaimed: string, late: LateResults): string => {
  if (item.generation === 0) return unclaimed;
  const worker = item.workerId === undefined ? '' : ` (worker ${item.workerId})`;
  const arrived = lateNote(item, late);
  if (item.releasedAt !== undefined) {
    const released = `generation ${item.generation}${worker} released its claim without a result`;
    return arrived === undefined ? released : `${released}; ${arrived}`;
  }
  return arrived === undefined
    ? `claimed by generation ${item.generation}${worker} but no result arrived`
    : `claimed by generation ${item.generation}${worker}; ${arrived}`;
};

/**
 * Why a subtask was sealed `timed_out`.
 *
 * @example
 * sealReason(item) // 'deadline 2025-06-01T12:01:00.000Z passed; never claimed: no worker picked it up'
 * sealReason(failedItem) // 'deadline …Z passed; 3 deliveries failed (last with WorkerCrashed); message dead-lettered; claimed by generation 3 (worker w-1) but no result arrived'
 */
export const sealReason = (item: SubtaskItem, late: LateResults = []): string => {
  const delivery = deliveryNote(item);
  const parts = [
    `deadline ${item.assignment?.deadline ?? new Date(item.deadlineMs).toISOString()} passed`,
    delivery,
    claimNote(item, delivery === undefined ? 'never claimed: no worker picked it up' : 'never claimed', late),
  ];
  return clipReason(parts.filter((part): part is string => part !== undefined).join('; '));
};

const CLOSED_BY = {
  cancel: 'run cancelled',
  run_cancelled: 'run cancelled',
  run_failed: 'run ended failed',
  run_succeeded: 'run ended succeeded',
} as const;

/**
 * Why a subtask was closed `cancelled` by its run.
 *
 * @example
 * closeReason(item) // 'run cancelled at 2025-06-01T12:00:30.000Z; claimed by generation 1 (worker w-1) but no result arrived'
 */
export const closeReason = (item: SubtaskItem, late: LateResults = []): string => {
  const how = item.closedBy === undefined ? 'run cancelled' : CLOSED_BY[item.closedBy];
  const when = item.closedAt === undefined ? '' : ` at ${item.closedAt}`;
  return clipReason(`${how}${when}; ${claimNote(item, 'never claimed', late)}`);
};

/**
 * The reason shown for a subtask in any state: the worker's own reason for results it recorded,
 * a rendered one for seals and cancellations, none while it is live. Results that arrived after
 * the seal (`late`) are named, so the reason never says no result arrived when one did.
 *
 * @example
 * describeSubtask({ ...item, state: 'running' }) // undefined
 * describeSubtask(sealed, lateItems) // 'deadline … passed; claimed by generation 1 (worker w-1); its result arrived late at … and is kept as late evidence'
 */
export const describeSubtask = (item: SubtaskItem, late: LateResults = []): string | undefined => {
  if (item.outcome !== undefined) return item.outcome.reason;
  if (item.state === 'timed_out') return sealReason(item, late);
  if (item.state === 'cancelled') return closeReason(item, late);
  return undefined;
};
