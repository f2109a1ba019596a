/**
 * Reasons for subtasks that ended without a result of their own, rendered from what the subtask
 * item knows (claims, generation, delivery failures, how the run ended). They are rendered when
 * read rather than stored: the facts are written by the seal or close itself, and after that the
 * item never changes again, so the text is stable and needs no read-modify-write to produce.
 */
import type { StoredSubtaskItem as SubtaskItem } from './items';
import { clipReason, plural } from './size';

const deliveryNote = (item: SubtaskItem): string | undefined => {
  const failure = item.lastDeliveryFailure;
  if (failure === undefined) return undefined;
  const dead = failure.deadLettered ? '; message dead-lettered' : '';
  return `${plural(failure.receiveCount, 'delivery', 'deliveries')} failed (last with ${failure.errorName})${dead}`;
};

const claimNote = (item: SubtaskItem, unclaimed: string): string => {
  if (item.generation === 0) return unclaimed;
  const worker = item.workerId === undefined ? '' : ` (worker ${item.workerId})`;
  return item.releasedAt === undefined
    ? `claimed by generation ${item.generation}${worker} but no result arrived`
    : `generation ${item.generation}${worker} released its claim without a result`;
};

/**
 * Why a subtask was sealed `timed_out`.
 *
 * @example
 * sealReason(item) // 'deadline 2025-06-01T12:01:00.000Z passed; never claimed: no worker picked it up'
 * sealReason(failedItem) // 'deadline …Z passed; 3 deliveries failed (last with WorkerCrashed); message dead-lettered; claimed by generation 3 (worker w-1) but no result arrived'
 */
export const sealReason = (item: SubtaskItem): string => {
  const delivery = deliveryNote(item);
  const parts = [
    `deadline ${item.assignment?.deadline ?? new Date(item.deadlineMs).toISOString()} passed`,
    delivery,
    claimNote(item, delivery === undefined ? 'never claimed: no worker picked it up' : 'never claimed'),
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
export const closeReason = (item: SubtaskItem): string => {
  const how = item.closedBy === undefined ? 'run cancelled' : CLOSED_BY[item.closedBy];
  const when = item.closedAt === undefined ? '' : ` at ${item.closedAt}`;
  return clipReason(`${how}${when}; ${claimNote(item, 'never claimed')}`);
};

/**
 * The reason shown for a subtask in any state: the worker's own reason for results it recorded,
 * a rendered one for seals and cancellations, none while it is live.
 *
 * @example
 * describeSubtask({ ...item, state: 'running' }) // undefined
 */
export const describeSubtask = (item: SubtaskItem): string | undefined => {
  if (item.outcome !== undefined) return item.outcome.reason;
  if (item.state === 'timed_out') return sealReason(item);
  if (item.state === 'cancelled') return closeReason(item);
  return undefined;
};
