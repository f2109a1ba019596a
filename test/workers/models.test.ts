import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MODEL_ENV } from '../../lib/workers/models/config';
import {
  assistantTurn,
  createModelProvider,
  createOfflineModel,
  ModelConfigError,
  ModelNotAllowed,
  OfflineScriptMissing,
  parseModelConfig,
  toolResultsTurn,
  toolSpec,
  userText,
  type ModelMessage,
} from '../../lib/workers';

const QUOTE = toolSpec('catering_quote', 'Quote the inquiry.', z.object({ sku: z.string(), guests: z.int() }));
const INQUIRY = '{"sku":"SKU-VANILLA","guests":41,"note":"for a wedding"}';

describe('the offline model plays scripted turns (the catering example)', () => {
  it('first asks for the tool with the inquiry it was given, keeping only the arguments the tool declares', async () => {
    const reply = await createOfflineModel().converse({ messages: [userText(INQUIRY)], tools: [QUOTE] });
    expect(reply).toMatchObject({
      toolCalls: [{ id: 'offline-1', name: 'catering_quote', input: { sku: 'SKU-VANILLA', guests: 41 } }],
      stopReason: 'tool_use',
    });
  });

  it('finishes once it has seen the tool result', async () => {
    const model = createOfflineModel();
    const messages: ModelMessage[] = [userText(INQUIRY)];
    const first = await model.converse({ messages, tools: [QUOTE] });
    messages.push(assistantTurn(first), toolResultsTurn([{ toolCallId: 'offline-1', content: { tubs: 5, totalPence: 2500 } }]));
    const second = await model.converse({ messages, tools: [QUOTE] });
    expect(second).toMatchObject({ text: 'Done: [{"tubs":5,"totalPence":2500}]', toolCalls: [], stopReason: 'end_turn' });
  });

  it('asks for one more guest under offline:broaden', async () => {
    const reply = await createOfflineModel({ variant: 'broaden' }).converse({ messages: [userText(INQUIRY)], tools: [QUOTE] });
    expect(reply.toolCalls[0]?.input).toEqual({ sku: 'SKU-VANILLA', guests: 42 });
  });

  it('answers a named task with the script registered for it', async () => {
    const model = createOfflineModel({ scripts: { greet: (_request, { turn }) => ({ text: `hello on turn ${turn}` }) } });
    expect((await model.converse({ messages: [userText('hi')], task: 'greet' })).text).toBe('hello on turn 0');
  });

  it('refuses a free-text request it has no script for', async () => {
    await expect(createOfflineModel().converse({ messages: [userText('write a poem')], task: 'poem' })).rejects.toBeInstanceOf(OfflineScriptMissing);
  });

  it('counts tokens deterministically', async () => {
    const request = { messages: [userText(INQUIRY)], tools: [QUOTE] };
    const [a, b] = await Promise.all([createOfflineModel().converse(request), createOfflineModel().converse(request)]);
    expect(a.usage).toEqual(b.usage);
    expect(a.usage.inputTokens).toBeGreaterThan(0);
  });
});

describe('model configuration', () => {
  it('defaults to the offline model', () => {
    expect(parseModelConfig({})).toEqual({ [MODEL_ENV.provider]: 'offline', [MODEL_ENV.allowedModelIds]: [] });
  });

  it('names the missing variable when bedrock has no model id', () => {
    expect(() => parseModelConfig({ [MODEL_ENV.provider]: 'bedrock' })).toThrow(
      new ModelConfigError(['BEDROCK_MODEL_ID is required when MODEL_PROVIDER is bedrock']),
    );
  });

  it('refuses an unknown provider', () => {
    expect(() => parseModelConfig({ [MODEL_ENV.provider]: 'openai' })).toThrow(ModelConfigError);
  });
});

describe('the model provider chooses an adapter per subtask', () => {
  const haiku = 'anthropic.claude-3-5-haiku-20241022-v1:0';
  const sonnet = 'anthropic.claude-3-5-sonnet-20241022-v2:0';
  const bedrock = createModelProvider({
    config: parseModelConfig({ [MODEL_ENV.provider]: 'bedrock', [MODEL_ENV.modelId]: haiku, [MODEL_ENV.allowedModelIds]: ` ${sonnet} ,` }),
    bedrockClient: () => new BedrockRuntimeClient({ region: 'eu-west-2', credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'x' } }),
  });

  it('gives a subtask without a model the deployment default', () => {
    expect(bedrock.select({}).id).toBe(haiku);
    expect(createModelProvider({ config: parseModelConfig({}) }).select({}).id).toBe('offline');
  });

  it('gives a subtask the allowed model it names, or an offline variant', () => {
    expect(bedrock.select({ model: sonnet }).id).toBe(sonnet);
    expect(bedrock.select({ model: 'offline:broaden' }).id).toBe('offline:broaden');
    expect(bedrock.allowed).toEqual(['offline', 'offline:broaden', haiku, sonnet]);
  });

  it('refuses a model that is not allowed, and Bedrock models in an offline deployment', () => {
    expect(() => bedrock.select({ model: 'meta.llama3-70b-instruct-v1:0' })).toThrow(ModelNotAllowed);
    expect(() => createModelProvider({ config: parseModelConfig({}) }).select({ model: haiku })).toThrow(
      new ModelNotAllowed(haiku, ['offline', 'offline:broaden']),
    );
    expect(() => bedrock.select({ model: 'offline:chatty' })).toThrow(ModelNotAllowed);
  });
});
