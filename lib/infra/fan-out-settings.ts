import { z } from 'zod';
import { WorkerKind } from '../contract';
import { DEFAULT_KIND_CONCURRENCY } from './defaults';
import { InvalidConstructProps } from './errors';
import { BATCH_SUBTASKS, MAX_BATCH_SUBTASKS } from './run-state-machine';

/*
 * Numeric and naming limits of the fan-out's props, as one zod schema: props are a boundary like
 * any other, and a bad value should fail `cdk synth` with its path, not a deployment an hour in.
 */

/** What the props must satisfy, with durations already in seconds. */
export const FanOutSettings = z.object({
  auth: z.object({
    issuer: z.string().startsWith('https://', 'must be an https:// issuer URL'),
    audiences: z.array(z.string().min(1)).min(1, 'needs at least one audience'),
    tenantClaim: z.string().min(1),
  }),
  corsAllowedOrigins: z.array(z.string().regex(/^(\*|https?:\/\/[^/\s]+)$/, 'must be an origin such as https://app.example.com')),
  throttle: z.object({ rateLimit: z.number().positive(), burstLimit: z.int().min(0) }),
  /** Every kind of the worker registry, in its order, with its settings. */
  kinds: z
    .record(
      WorkerKind,
      z.object({
        // Lambda's event-source MaximumConcurrency accepts 2 to 1000.
        maxConcurrency: z.int().min(2).max(1000).default(DEFAULT_KIND_CONCURRENCY),
      }),
    )
    .refine((kinds) => Object.keys(kinds).length > 0, 'the worker registry needs at least one worker kind'),
  // Lambda's own 15-minute ceiling.
  workerTimeoutSeconds: z.int().min(1).max(900),
  // An SQS event source's MaximumBatchingWindowInSeconds: 0 to 300, whole seconds.
  workerBatchingWindowSeconds: z.int().min(0).max(300),
  // Subtask messages are kept a day; a deadline beyond half of that could outlive its message.
  maxDeadlineSeconds: z
    .int()
    .min(1)
    .max(12 * 3600),
  // An inline Map runs at most 40 iterations at once whatever it is told; beyond that is Distributed Map.
  mapMaxConcurrency: z.int().min(1).max(40),
  // The AwaitBatches Map is an inline Map too.
  batchConcurrency: z.int().min(1).max(40),
  // A batch's child execution must hold the batch with every subtask hedged on its costliest path.
  batchSubtasks: z
    .int()
    .min(1)
    .max(MAX_BATCH_SUBTASKS, `must fit one child execution's history with every subtask hedged (at most ${MAX_BATCH_SUBTASKS})`)
    .default(BATCH_SUBTASKS),
  tenantDailyAllowance: z.object({ modelCalls: z.int().min(1), costLimit: z.int().min(1) }),
  degradedRunRateThreshold: z.number().gt(0).lte(1),
  serviceName: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/),
  model: z.discriminatedUnion('provider', [
    z.object({ provider: z.literal('offline') }),
    z.object({ provider: z.literal('bedrock'), modelId: z.string().regex(/^[A-Za-z0-9.:_-]{1,128}$/, 'must be a Bedrock model id') }),
  ]),
});
export type FanOutSettings = z.infer<typeof FanOutSettings>;
export type FanOutSettingsInput = z.input<typeof FanOutSettings>;

/**
 * Validates the fan-out's props, naming every problem with its path.
 *
 * @example
 * parseFanOutSettings('App/Stack/FanOut', { ...input, mapMaxConcurrency: 0 })
 * // throws InvalidConstructProps: mapMaxConcurrency: Too small: expected number to be >=1
 */
export const parseFanOutSettings = (constructPath: string, input: FanOutSettingsInput): FanOutSettings => {
  const result = FanOutSettings.safeParse(input);
  if (result.success) return result.data;
  throw new InvalidConstructProps(
    constructPath,
    result.error.issues.map((issue) => `${issue.path.join('.') || '(props)'}: ${issue.message}`),
    { cause: result.error },
  );
};
