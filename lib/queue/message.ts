import { z } from 'zod';
import { SubtaskId } from '../contract';

/**
 * The body of a subtask message. It names the subtask and nothing else: the assignment itself
 * lives in the ledger, so a message can never widen or alter what was dispatched.
 */
export const SubtaskMessage = z.object({
  v: z.literal(1),
  tenantId: z.string().min(1),
  runId: z.string().min(1),
  subtaskId: SubtaskId,
});
export type SubtaskMessage = z.infer<typeof SubtaskMessage>;

/** A subtask to enqueue, with the worker kind that selects its queue. */
export interface Delivery {
  readonly worker: string;
  readonly message: SubtaskMessage;
}
