import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { ModelNotAllowed } from '../errors';
import type { ModelAdapter } from '../model';
import { createBedrockAdapter } from './bedrock';
import { allowedModelIds, bedrockIdsOf, type ModelConfig } from './config';
import { createOfflineModel, parseOfflineModelId, type OfflineScript } from './offline';

export { allowedModelIds, ModelEnvironment, parseModelConfig, type ModelConfig } from './config';

/**
 * Which model a subtask gets. The deployment chooses a provider and the Bedrock models it
 * allows; a subtask may name one of them (or an offline variant) in its `model` field.
 */

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
