import { z } from 'zod';
import { ModelConfigError } from '../errors';
import { OFFLINE_VARIANTS } from './offline';

/**
 * The model variables of a deployment and the model ids they allow. Kept apart from the
 * adapters so the api function can check a subtask's `model` without bundling the Bedrock client.
 */

const commaList = z
  .string()
  .optional()
  .transform((value) =>
    (value ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0),
  );

/**
 * The names of the model variables, as the construct sets them and `ModelEnvironment` reads them.
 *
 * @example
 * fn.addEnvironment(MODEL_ENV.provider, 'bedrock');
 */
export const MODEL_ENV = {
  provider: 'MODEL_PROVIDER',
  modelId: 'BEDROCK_MODEL_ID',
  allowedModelIds: 'BEDROCK_ALLOWED_MODEL_IDS',
} as const;

/**
 * The model variables of a function's environment. Compose it into the function's own config
 * schema, or parse it alone with `parseModelConfig`.
 *
 * @example
 * const Config = z.object({ TABLE_NAME: z.string() }).and(ModelEnvironment);
 */
export const ModelEnvironment = z
  .object({
    /** `offline` (default): the deterministic model. `bedrock`: Amazon Bedrock Converse. */
    [MODEL_ENV.provider]: z.enum(['offline', 'bedrock']).default('offline'),
    /** The model subtasks get when they name none; required with `bedrock`. */
    [MODEL_ENV.modelId]: z.string().trim().min(1).optional(),
    /** More Bedrock model ids a subtask may name, comma-separated. */
    [MODEL_ENV.allowedModelIds]: commaList,
  })
  .superRefine((env, ctx) => {
    if (env.MODEL_PROVIDER === 'bedrock' && env.BEDROCK_MODEL_ID === undefined) {
      ctx.addIssue({ code: 'custom', path: [MODEL_ENV.modelId], message: `is required when ${MODEL_ENV.provider} is bedrock` });
    }
  });
export type ModelConfig = z.output<typeof ModelEnvironment>;

/**
 * Parses the model variables once, at cold start, naming every bad one.
 *
 * @example
 * const config = parseModelConfig(process.env); // ModelConfigError: BEDROCK_MODEL_ID is required when MODEL_PROVIDER is bedrock
 */
export const parseModelConfig = (env: Readonly<Record<string, string | undefined>>): ModelConfig => {
  const parsed = ModelEnvironment.safeParse(env);
  if (parsed.success) return parsed.data;
  throw new ModelConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.') || 'environment'} ${issue.message}`));
};

const offlineIds = OFFLINE_VARIANTS.map((variant) => (variant === 'default' ? 'offline' : `offline:${variant}`));

/** The Bedrock model ids a configuration allows (none unless `MODEL_PROVIDER=bedrock`). */
export const bedrockIdsOf = (config: ModelConfig): string[] =>
  config.MODEL_PROVIDER === 'bedrock' && config.BEDROCK_MODEL_ID !== undefined
    ? [...new Set([config.BEDROCK_MODEL_ID, ...config.BEDROCK_ALLOWED_MODEL_IDS])]
    : [];

/**
 * Every model id a subtask may name in a deployment with this configuration: the offline
 * variants always, the configured Bedrock models with `MODEL_PROVIDER=bedrock`. Planning refuses
 * any other (through the catalog's `models`), so a bad `model` is a 400, not an invalid round.
 *
 * @example
 * allowedModelIds(parseModelConfig({})) // ['offline', 'offline:broaden']
 */
export const allowedModelIds = (config: ModelConfig): string[] => [...offlineIds, ...bedrockIdsOf(config)];
