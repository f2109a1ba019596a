import {
  ConverseCommand,
  type BedrockRuntimeClient,
  type ContentBlock,
  type ConverseCommandInput,
  type Message,
  type ToolChoice as BedrockToolChoice,
  type ToolResultContentBlock,
  type ToolUseBlock,
} from '@aws-sdk/client-bedrock-runtime';
import { z } from 'zod';
import { ModelCallFailed, ModelReplyInvalid } from '../errors';
import { ConverseRequest, ConverseResult, type ModelAdapter, type ParsedConverseRequest, type StopReason, type ToolChoice } from '../model';

/**
 * Amazon Bedrock through the Converse API, with tool use (`toolConfig`/`toolSpec` out,
 * `toolUse` blocks back, `toolResult` blocks in the next turn). Every model that Converse
 * supports with tools works the same way; the model id comes from configuration.
 *
 * @example
 * createBedrockAdapter({ client, modelId: 'anthropic.claude-3-5-haiku-20241022-v1:0', maxTokens: 512 });
 */

export interface BedrockAdapterOptions {
  /** Created once per cold start by the caller; region and credentials come from the environment. */
  readonly client: BedrockRuntimeClient;
  /** A model id or inference profile id, such as `anthropic.claude-3-5-haiku-20241022-v1:0`. */
  readonly modelId: string;
  /** Default `maxTokens` when a request does not set one. @default 1024 */
  readonly maxTokens?: number;
}

type BedrockDocument = NonNullable<ToolUseBlock['input']>;

/**
 * The conversation holds JSON only (tool inputs the model sent, results the tools returned), so
 * it is already a Smithy document; the SDK's type just cannot know that of `unknown`.
 */
const asDocument = (value: unknown): BedrockDocument => value as BedrockDocument;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A tool result's JSON block must be an object; other JSON values are wrapped. */
const resultBlock = (content: unknown, isError: boolean): ToolResultContentBlock =>
  isError ? { text: typeof content === 'string' ? content : JSON.stringify(content) } : { json: asDocument(isRecord(content) ? content : { result: content }) };

const toBlock = (part: ParsedConverseRequest['messages'][number]['content'][number]): ContentBlock => {
  switch (part.type) {
    case 'text':
      return { text: part.text };
    case 'toolCall':
      return { toolUse: { toolUseId: part.id, name: part.name, input: asDocument(part.input) } };
    case 'toolResult':
      return {
        toolResult: {
          toolUseId: part.toolCallId,
          content: [resultBlock(part.content, part.isError)],
          status: part.isError ? 'error' : 'success',
        },
      };
  }
};

const toToolChoice = (choice: ToolChoice): BedrockToolChoice => {
  if (choice === 'auto') return { auto: {} };
  if (choice === 'any') return { any: {} };
  return { tool: { name: choice.tool } };
};

/**
 * The Converse request for a provider-neutral request. Exported so tests can compare it with
 * what reached the wire.
 *
 * @example
 * toConverseInput('anthropic.claude-3-5-haiku-20241022-v1:0', request, 1024).toolConfig?.tools?.[0]?.toolSpec?.name
 */
export const toConverseInput = (modelId: string, request: ParsedConverseRequest, maxTokens: number): ConverseCommandInput => ({
  modelId,
  messages: request.messages.map((message): Message => ({ role: message.role, content: message.content.map(toBlock) })),
  ...(request.system === undefined ? {} : { system: [{ text: request.system }] }),
  inferenceConfig: { maxTokens: request.maxTokens ?? maxTokens, temperature: 0 },
  ...(request.tools.length === 0
    ? {}
    : {
        toolConfig: {
          tools: request.tools.map((tool) => ({
            toolSpec: { name: tool.name, description: tool.description, inputSchema: { json: asDocument(tool.inputSchema) } },
          })),
          ...(request.toolChoice === undefined ? {} : { toolChoice: toToolChoice(request.toolChoice) }),
        },
      }),
});

/** The parts of a Converse response the adapter reads; everything is checked, nothing assumed. */
const ConverseResponseShape = z.object({
  output: z.object({
    message: z.object({
      role: z.literal('assistant'),
      content: z.array(
        z.object({
          text: z.string().optional(),
          toolUse: z.object({ toolUseId: z.string().min(1), name: z.string().min(1), input: z.unknown() }).optional(),
        }),
      ),
    }),
  }),
  stopReason: z.string(),
  usage: z.object({ inputTokens: z.int().min(0), outputTokens: z.int().min(0) }),
});

const STOP_REASONS: Readonly<Record<string, StopReason>> = {
  end_turn: 'end_turn',
  stop_sequence: 'end_turn',
  tool_use: 'tool_use',
  max_tokens: 'max_tokens',
};

/**
 * Reads a Converse response into the common result.
 *
 * @example
 * fromConverseOutput(response).toolCalls // [{ id: 'tooluse_…', name: 'catering_quote', input: { … } }]
 */
export const fromConverseOutput = (response: unknown): ConverseResult => {
  const parsed = ConverseResponseShape.safeParse(response);
  if (!parsed.success) {
    throw new ModelReplyInvalid(
      'bedrock',
      parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`),
    );
  }
  const { content } = parsed.data.output.message;
  const texts = content.flatMap((block) => (block.text === undefined ? [] : [block.text]));
  return ConverseResult.parse({
    ...(texts.length === 0 ? {} : { text: texts.join('\n') }),
    toolCalls: content.flatMap((block) =>
      block.toolUse === undefined ? [] : [{ id: block.toolUse.toolUseId, name: block.toolUse.name, input: block.toolUse.input }],
    ),
    stopReason: STOP_REASONS[parsed.data.stopReason] ?? 'other',
    usage: parsed.data.usage,
  });
};

/**
 * Creates the Bedrock adapter.
 *
 * @example
 * const client = new BedrockRuntimeClient({}); // module scope: once per cold start
 * const model = createBedrockAdapter({ client, modelId: config.BEDROCK_MODEL_ID });
 */
export const createBedrockAdapter = (options: BedrockAdapterOptions): ModelAdapter => ({
  id: options.modelId,
  converse: async (input, callOptions) => {
    const command = new ConverseCommand(toConverseInput(options.modelId, ConverseRequest.parse(input), options.maxTokens ?? 1024));
    let response: unknown;
    try {
      response = await options.client.send(command, callOptions?.signal ? { abortSignal: callOptions.signal } : {});
    } catch (error) {
      throw new ModelCallFailed('bedrock', options.modelId, error instanceof Error ? error.name : 'UnknownError', { cause: error });
    }
    return fromConverseOutput(response);
  },
});
