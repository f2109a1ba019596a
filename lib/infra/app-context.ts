import { RemovalPolicy } from 'aws-cdk-lib';
import type { Node } from 'constructs';
import { z } from 'zod';
import { InvalidConstructProps } from './errors';
import type { TesseraStackProps } from './stack';

/**
 * Deployment choices read from CDK context (`npx cdk deploy -c tessera:removalPolicy=destroy`).
 * Values given on the command line arrive as strings, so booleans and lists are parsed from them.
 */
export const CONTEXT_KEYS = {
  stackName: 'tessera:stackName',
  removalPolicy: 'tessera:removalPolicy',
  deletionProtection: 'tessera:deletionProtection',
  alarmEmail: 'tessera:alarmEmail',
  corsOrigins: 'tessera:corsOrigins',
  model: 'tessera:model',
  bedrockModelId: 'tessera:bedrockModelId',
  faultInjection: 'tessera:faultInjection',
  emulator: 'tessera:emulator',
  /** `TesseraFanOut`'s `batchSubtasks`: subtasks per batch of a round. */
  batchSubtasks: 'tessera:batchSubtasks',
  /** `TesseraFanOut`'s `batchConcurrency`: batches of a round run at once. */
  batchConcurrency: 'tessera:batchConcurrency',
} as const;

const booleanText = z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]);
const commaList = z.union([
  z.array(z.string()),
  z.string().transform((v) =>
    v
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  ),
]);

export const AppContext = z.object({
  stackName: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9-]{0,127}$/)
    .default('Tessera'),
  removalPolicy: z.enum(['retain', 'destroy']).default('retain'),
  deletionProtection: booleanText.optional(),
  alarmEmail: z.email().optional(),
  corsOrigins: commaList.default([]),
  model: z.enum(['offline', 'bedrock']).default('offline'),
  bedrockModelId: z.string().min(1).optional(),
  faultInjection: booleanText.default(false),
  emulator: booleanText.default(false),
  batchSubtasks: z.coerce.number().int().optional(),
  batchConcurrency: z.coerce.number().int().optional(),
});
export type AppContext = z.infer<typeof AppContext>;

/** Stack props from context: everything but the worker module, which is the app's own choice. */
export type ContextStackProps = Omit<TesseraStackProps, 'fanOut'> & { readonly fanOut: Omit<TesseraStackProps['fanOut'], 'workers' | 'kinds'> };

/**
 * Reads the tessera context keys of an app and turns them into stack props. `destroy` also
 * turns deletion protection off unless it is set explicitly, so a dev stack can be torn down.
 * `faultInjection` is for the app to act on: it picks the worker module (the example app's
 * `fault-workers.ts` adds the `chaos` kind the fault suite needs). `emulator` is for the app too:
 * it applies `WithoutMetricMathAlarms` (lib/infra/emulator.ts) for a deployment to an AWS emulator.
 *
 * @example
 * const { stackName, props } = stackPropsFromContext(app.node);
 * new TesseraStack(app, stackName, { ...props, fanOut: { ...props.fanOut, workers: { entry: 'src/workers.ts' } } });
 */
export const stackPropsFromContext = (node: Node): { stackName: string; faultInjection: boolean; emulator: boolean; props: ContextStackProps } => {
  const raw = Object.fromEntries(Object.entries(CONTEXT_KEYS).map(([field, key]) => [field, node.tryGetContext(key)]));
  const parsed = AppContext.safeParse(raw);
  if (!parsed.success) {
    throw new InvalidConstructProps(
      'CDK context',
      parsed.error.issues.map((i) => `${CONTEXT_KEYS[i.path[0] as keyof typeof CONTEXT_KEYS] ?? '(context)'}: ${i.message}`),
    );
  }
  const ctx = parsed.data;
  if (ctx.model === 'bedrock' && !ctx.bedrockModelId) {
    throw new InvalidConstructProps('CDK context', [`${CONTEXT_KEYS.bedrockModelId}: is required when ${CONTEXT_KEYS.model}=bedrock`]);
  }
  const destroy = ctx.removalPolicy === 'destroy';
  return {
    stackName: ctx.stackName,
    faultInjection: ctx.faultInjection,
    emulator: ctx.emulator,
    props: {
      alarmEmail: ctx.alarmEmail,
      fanOut: {
        removalPolicy: destroy ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
        deletionProtection: ctx.deletionProtection ?? !destroy,
        corsAllowedOrigins: ctx.corsOrigins,
        model: ctx.model === 'bedrock' && ctx.bedrockModelId ? { provider: 'bedrock', modelId: ctx.bedrockModelId } : { provider: 'offline' },
        ...(ctx.batchSubtasks === undefined ? {} : { batchSubtasks: ctx.batchSubtasks }),
        ...(ctx.batchConcurrency === undefined ? {} : { batchConcurrency: ctx.batchConcurrency }),
      },
    },
  };
};
