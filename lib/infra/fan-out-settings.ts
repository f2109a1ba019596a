import { Token } from 'aws-cdk-lib';
import { z } from 'zod';
import { WorkerKind } from '../contract';
import { DEFAULT_KIND_CONCURRENCY } from './defaults';
import { InvalidConstructProps } from './errors';
import { BATCH_SUBTASKS, MAX_BATCH_SUBTASKS } from './run-state-machine';

/*
 * Numeric and naming limits of the fan-out's props, as one zod schema: props are a boundary like
 * any other, and a bad value should fail `cdk synth` with its path, not a deployment an hour in.
 *
 * A prop the construct only passes on to CloudFormation (the issuer, an audience, an origin, the
 * service name, the model id, the API throttle) may be an unresolved CDK token, such as a user
 * pool's `userPoolProviderUrl` or a CfnParameter: its value is known only at deploy time, so its
 * check is skipped. A number the construct computes with (a timeout that sizes a lease and the
 * state machine's timeout, a concurrency, an allowance written into an environment variable) must
 * be known at synth time, and a token there is refused with that reason.
 */

const unresolved = (value: unknown): boolean => Token.isUnresolved(value);

/** A string check that an unresolved token skips. */
const tokenOrString = (check: (value: string) => boolean, message: string) => z.string().refine((value) => unresolved(value) || check(value), message);

/** A number passed on as it is: any token, else `schema`'s check. */
const tokenOrNumber = (schema: z.ZodNumber) =>
  z.number().refine((value) => unresolved(value) || schema.safeParse(value).success, schema.description ?? 'out of range');

/** A number the construct computes with: a token is refused before `schema` checks it. */
const synthTime = <T extends z.ZodType<number, number>>(schema: T) =>
  z
    .number()
    .refine((value) => !unresolved(value), {
      message: 'must be known at synth time, not an unresolved token: the construct sizes resources and limits with it',
      abort: true,
    })
    .pipe(schema);

/** What the props must satisfy, with durations already in seconds. */
export const FanOutSettings = z.object({
  auth: z.object({
    issuer: tokenOrString((issuer) => issuer.startsWith('https://'), 'must be an https:// issuer URL'),
    audiences: z.array(tokenOrString((audience) => audience.length > 0, 'must not be empty')).min(1, 'needs at least one audience'),
    tenantClaim: tokenOrString((claim) => claim.length > 0, 'must not be empty'),
  }),
  corsAllowedOrigins: z.array(tokenOrString((origin) => /^(\*|https?:\/\/[^/\s]+)$/.test(origin), 'must be an origin such as https://app.example.com')),
  throttle: z.object({
    rateLimit: tokenOrNumber(z.number().positive().describe('must be a positive number of requests per second')),
    burstLimit: tokenOrNumber(z.int().min(0).describe('must be a whole number of requests, 0 or more')),
  }),
  /** Every kind of the worker registry, in its order, with its settings. */
  kinds: z
    .record(
      WorkerKind,
      z.object({
        // Lambda's event-source MaximumConcurrency accepts 2 to 1000.
        maxConcurrency: synthTime(z.int().min(2).max(1000)).default(DEFAULT_KIND_CONCURRENCY),
      }),
    )
    .refine((kinds) => Object.keys(kinds).length > 0, 'the worker registry needs at least one worker kind'),
  // Lambda's own 15-minute ceiling.
  workerTimeoutSeconds: synthTime(z.int().min(1).max(900)),
  // An SQS event source's MaximumBatchingWindowInSeconds: 0 to 300, whole seconds.
  workerBatchingWindowSeconds: synthTime(z.int().min(0).max(300)),
  // Subtask messages are kept a day; a deadline beyond half of that could outlive its message.
  maxDeadlineSeconds: synthTime(
    z
      .int()
      .min(1)
      .max(12 * 3600),
  ),
  // An inline Map runs at most 40 iterations at once whatever it is told; beyond that is Distributed Map.
  mapMaxConcurrency: synthTime(z.int().min(1).max(40)),
  // The AwaitBatches Map is an inline Map too.
  batchConcurrency: synthTime(z.int().min(1).max(40)),
  // A batch's child execution must hold the batch with every subtask hedged on its costliest path.
  batchSubtasks: synthTime(
    z.int().min(1).max(MAX_BATCH_SUBTASKS, `must fit one child execution's history with every subtask hedged (at most ${MAX_BATCH_SUBTASKS})`),
  ).default(BATCH_SUBTASKS),
  tenantDailyAllowance: z.object({ modelCalls: synthTime(z.int().min(1)), costLimit: synthTime(z.int().min(1)) }),
  degradedRunRateThreshold: synthTime(z.number().gt(0).lte(1)),
  serviceName: tokenOrString((name) => /^[A-Za-z0-9._-]{1,64}$/.test(name), 'must be 1 to 64 letters, digits, dots, underscores or hyphens'),
  model: z.discriminatedUnion('provider', [
    z.object({ provider: z.literal('offline') }),
    z.object({ provider: z.literal('bedrock'), modelId: tokenOrString((id) => /^[A-Za-z0-9.:_-]{1,128}$/.test(id), 'must be a Bedrock model id') }),
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
