import { z } from 'zod';
import { ModelNotAllowed, OfflineScriptMissing } from '../errors';
import { ConverseRequest, ConverseResult, type ModelAdapter, type ParsedConverseRequest, type ToolCall } from '../model';

/**
 * The offline model: deterministic, free, and scripted, for tests, examples and the local cloud.
 *
 * Its default script plays the catering example's fixture: on the first turn it calls the offered tool with
 * the arguments written in the user's message; once it has seen a tool result it finishes.
 * A variant changes what it asks for, so an example can watch a scoped tool refuse a model:
 * `offline:broaden` asks for one more of every whole number (42 guests instead of 41).
 * Kinds add named scripts for their own tasks (`classify-deductible`).
 */

/**
 * What a script may answer; the adapter adds token usage and the stop reason.
 *
 * @example
 * const reply: OfflineReply = { toolCalls: [{ id: 'offline-1', name: 'record_deductible', input: { transactionIds: [] } }] };
 */
export interface OfflineReply {
  readonly text?: string;
  readonly toolCalls?: readonly ToolCall[];
}

/**
 * @example
 * const script: OfflineScript = (_request, { turn }) => ({ text: turn === 0 ? 'first' : 'again' });
 */
export interface OfflineTurn {
  /** `default` or the part after `offline:` in the subtask's `model`. */
  readonly variant: OfflineVariant;
  /** How many assistant turns the conversation already holds. */
  readonly turn: number;
}

/**
 * @example
 * offlineScripts: { 'classify-deductible': (request) => ({ toolCalls: [{ id: 'c1', name: 'record_deductible', input: rule(promptJson(request)) }] }) }
 */
export type OfflineScript = (request: ParsedConverseRequest, turn: OfflineTurn) => OfflineReply;

/**
 * The variants the default script knows.
 *
 * @example
 * OFFLINE_VARIANTS.includes('broaden') // true: `offline:broaden` is a valid subtask model
 */
export const OFFLINE_VARIANTS = ['default', 'broaden'] as const;
export type OfflineVariant = (typeof OFFLINE_VARIANTS)[number];

/**
 * @example
 * createOfflineModel({ variant: 'broaden', scripts: { greet: () => ({ text: 'hello' }) } });
 */
export interface OfflineModelOptions {
  readonly variant?: OfflineVariant;
  /** Scripts by `task` name; a request naming a task with a script is answered by it. */
  readonly scripts?: Readonly<Record<string, OfflineScript>>;
}

/**
 * Reads `offline` or `offline:<variant>`; anything else is not an offline model id.
 *
 * @example
 * parseOfflineModelId('offline:broaden') // 'broaden'
 * parseOfflineModelId('anthropic.claude-3-haiku-20240307-v1:0') // undefined
 */
export const parseOfflineModelId = (model: string): OfflineVariant | undefined => {
  if (model === 'offline') return 'default';
  if (!model.startsWith('offline:')) return undefined;
  const variant = model.slice('offline:'.length);
  const known = OFFLINE_VARIANTS.find((name) => name === variant);
  if (!known)
    throw new ModelNotAllowed(
      model,
      OFFLINE_VARIANTS.map((name) => (name === 'default' ? 'offline' : `offline:${name}`)),
    );
  return known;
};

const JsonObject = z.record(z.string(), z.unknown());

/**
 * The JSON object written in the latest user text, which is where workers put the inquiry;
 * `{}` when there is none. Scripts read their arguments from it.
 *
 * @example
 * promptJson({ messages: [userText('{"sku":"SKU-VANILLA","guests":41}')], tools: [] }) // { sku: 'SKU-VANILLA', guests: 41 }
 */
export const promptJson = (request: ParsedConverseRequest): Record<string, unknown> => {
  const texts = request.messages
    .filter((message) => message.role === 'user')
    .flatMap((message) => message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])));
  const text = texts.at(-1) ?? '';
  const start = text.indexOf('{');
  if (start < 0) return {};
  try {
    const parsed = JsonObject.safeParse(JSON.parse(text.slice(start)));
    return parsed.success ? parsed.data : {};
  } catch {
    return {};
  }
};

/** Keeps only the properties the tool's input schema declares, as a model reading the schema would. */
const fitToSchema = (args: Record<string, unknown>, inputSchema: Record<string, unknown>): Record<string, unknown> => {
  const properties = JsonObject.safeParse(inputSchema['properties']);
  if (!properties.success) return args;
  return Object.fromEntries(Object.entries(args).filter(([key]) => key in properties.data));
};

const broaden = (args: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(args).map(([key, value]) => [key, Number.isInteger(value) ? (value as number) + 1 : value]));

const lastToolResults = (request: ParsedConverseRequest) =>
  request.messages.at(-1)?.content.flatMap((part) => (part.type === 'toolResult' ? [part] : [])) ?? [];

/**
 * The default script: call the tool with the prompt's arguments, then finish.
 *
 * @example
 * toolThenFinish({ messages: [userText('{"sku":"SKU-VANILLA","guests":41}')], tools: [quoteSpec] }, { variant: 'default', turn: 0 })
 * // { toolCalls: [{ id: 'offline-1', name: 'catering_quote', input: { sku: 'SKU-VANILLA', guests: 41 } }] }
 */
export const toolThenFinish: OfflineScript = (request, { variant, turn }) => {
  const results = lastToolResults(request);
  if (results.length > 0) {
    const refused = results.filter((result) => result.isError);
    return {
      text:
        refused.length > 0
          ? `The tool refused the request: ${String(refused[0]?.content)}`
          : `Done: ${JSON.stringify(results.map((result) => result.content))}`,
    };
  }
  const choice = request.toolChoice;
  const tool = typeof choice === 'object' ? request.tools.find((spec) => spec.name === choice.tool) : request.tools[0];
  if (!tool) throw new OfflineScriptMissing(request.task);
  const args = fitToSchema(promptJson(request), tool.inputSchema);
  return { toolCalls: [{ id: `offline-${turn + 1}`, name: tool.name, input: variant === 'broaden' ? broaden(args) : args }] };
};

/** A rough, deterministic token count: about four characters a token. */
const tokens = (value: unknown): number => Math.ceil((JSON.stringify(value) ?? '').length / 4);

/**
 * Creates the offline model.
 *
 * @example
 * const model = createOfflineModel({ variant: 'broaden' });
 * const reply = await model.converse({ messages: [userText('{"sku":"SKU-VANILLA","guests":41}')], tools: [quoteSpec] });
 * reply.toolCalls[0]?.input // { sku: 'SKU-VANILLA', guests: 42 }
 */
export const createOfflineModel = (options: OfflineModelOptions = {}): ModelAdapter => {
  const variant = options.variant ?? 'default';
  const scripts = options.scripts ?? {};
  return {
    id: variant === 'default' ? 'offline' : `offline:${variant}`,
    converse: async (input, callOptions) => {
      callOptions?.signal?.throwIfAborted();
      const request = ConverseRequest.parse(input);
      const turn = request.messages.filter((message) => message.role === 'assistant').length;
      const script = (request.task === undefined ? undefined : scripts[request.task]) ?? toolThenFinish;
      const reply = script(request, { variant, turn });
      const toolCalls = [...(reply.toolCalls ?? [])];
      return ConverseResult.parse({
        ...(reply.text === undefined ? {} : { text: reply.text }),
        toolCalls,
        stopReason: toolCalls.length > 0 ? 'tool_use' : 'end_turn',
        usage: { inputTokens: tokens(request), outputTokens: tokens(reply) },
      });
    },
  };
};
