import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { z } from 'zod';
import { ModelConfigError, ModelNotAllowed } from '../errors';
import type { ModelAdapter } from '../model';
import { createBedrockAdapter } from './bedrock';
import { createOfflineModel, OFFLINE_VARIANTS, parseOfflineModelId, type OfflineScript } from './offline';

/**
 * Which model a subtask gets. The deployment chooses a provider and the Bedrock models it
 * allows; a subtask may name one of them (or an offline variant) in its `model` field.
 */

const commaList = z
  .string()
  .optional()
  .transform((value) => (value ?? '').split(',').map((item) => item.trim()).filter((item) => item.length > 0));

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
    MODEL_PROVIDER: z.enum(['offline', 'bedrock']).default('offline'),
    /** The model subtasks get when they name none; required with `bedrock`. */
    BEDROCK_MODEL_ID: z.string().trim().min(1).optional(),
    /** More Bedrock model ids a subtask may name, comma-separated. */
    BEDROCK_ALLOWED_MODEL_IDS: commaList,
  })
  .superRefine((env, ctx) => {
    if (env.MODEL_PROVIDER === 'bedrock' && env.BEDROCK_MODEL_ID === undefined) {
      ctx.addIssue({ code: 'custom', path: ['BEDROCK_MODEL_ID'], message: 'is required when MODEL_PROVIDER is bedrock' });
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

/**
 * @example
 * models.select({ model: subtask.model, offlineScripts: kind.offlineScripts });
 */
export interface ModelSelection {
  /** The subtask's `model`; `undefined` picks the deployment's default. */
  readonly model?: string | undefined;
  /** The worker kind's offline scripts, used when the offline model is picked. */
  readonly offlineScripts?: Readonly<Record<string, OfflineScript>>;
}

/**
 * Chooses the adapter for each subtask.
 *
 * @example
 * const adapter = models.select({ model: 'offline:broaden' });
 */
export interface ModelProvider {
  /** Every model id a subtask may name here. */
  readonly allowed: readonly string[];
  /** Throws `ModelNotAllowed` for a model this deployment does not allow. */
  select(selection: ModelSelection): ModelAdapter;
}

/**
 * @example
 * createModelProvider({ config, bedrockClient: () => new BedrockRuntimeClient({ maxAttempts: 5 }) });
 */
export interface ModelProviderOptions {
  readonly config: ModelConfig;
  /** Makes the Bedrock client, once, on first use. @default () => new BedrockRuntimeClient({}) */
  readonly bedrockClient?: () => BedrockRuntimeClient;
}

const offlineIds = OFFLINE_VARIANTS.map((variant) => (variant === 'default' ? 'offline' : `offline:${variant}`));

const bedrockIdsOf = (config: ModelConfig): string[] =>
  config.MODEL_PROVIDER === 'bedrock' && config.BEDROCK_MODEL_ID !== undefined ? [...new Set([config.BEDROCK_MODEL_ID, ...config.BEDROCK_ALLOWED_MODEL_IDS])] : [];

/**
 * Every model id a subtask may name in a deployment with this configuration: the offline
 * variants always, the configured Bedrock models with `MODEL_PROVIDER=bedrock`. Planning refuses
 * any other (through the catalog's `models`), so a bad `model` is a 400, not an invalid round.
 *
 * @example
 * allowedModelIds(parseModelConfig({})) // ['offline', 'offline:broaden']
 */
export const allowedModelIds = (config: ModelConfig): string[] => [...offlineIds, ...bedrockIdsOf(config)];

/**
 * Creates the provider. The offline model is always allowed: it is free and deterministic, so a
 * canary subtask can use it in any deployment. Bedrock models are allowed only with
 * `MODEL_PROVIDER=bedrock`, and only the ones configured.
 *
 * @example
 * const models = createModelProvider({ config: parseModelConfig(process.env) });
 * models.select({ model: 'offline:broaden' }).id // 'offline:broaden'
 */
export const createModelProvider = (options: ModelProviderOptions): ModelProvider => {
  const { config } = options;
  const bedrockIds = bedrockIdsOf(config);
  const allowed = allowedModelIds(config);
  const fallback = config.MODEL_PROVIDER === 'bedrock' ? (config.BEDROCK_MODEL_ID ?? 'offline') : 'offline';
  let client: BedrockRuntimeClient | undefined;
  const bedrockAdapters = new Map<string, ModelAdapter>();

  const bedrock = (modelId: string): ModelAdapter => {
    client ??= (options.bedrockClient ?? (() => new BedrockRuntimeClient({})))();
    const adapter = bedrockAdapters.get(modelId) ?? createBedrockAdapter({ client, modelId });
    bedrockAdapters.set(modelId, adapter);
    return adapter;
  };

  return {
    allowed,
    select: ({ model, offlineScripts }) => {
      const id = model ?? fallback;
      const variant = parseOfflineModelId(id);
      if (variant !== undefined) return createOfflineModel({ variant, ...(offlineScripts ? { scripts: offlineScripts } : {}) });
      if (bedrockIds.includes(id)) return bedrock(id);
      throw new ModelNotAllowed(id, allowed);
    },
  };
};
