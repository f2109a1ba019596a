import { z } from 'zod';

/**
 * The provider-neutral conversation that every model adapter speaks. It mirrors the shape of
 * Bedrock Converse (system, messages of content blocks, tool specs, tool calls and results)
 * closely enough that the Bedrock adapter is a mapping, and is small enough that the offline
 * model can script it.
 */

/**
 * A tool the model may call, described by a JSON Schema for its input.
 *
 * @example
 * ToolSpec.parse({ name: 'catering_quote', description: 'Quote the inquiry.', inputSchema: { type: 'object' } });
 */
export const ToolSpec = z.object({
  /** Bedrock's rule for tool names: letters, digits, `_` and `-`, at most 64. */
  name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/),
  description: z.string().min(1),
  inputSchema: z.record(z.string(), z.unknown()),
});
export type ToolSpec = z.infer<typeof ToolSpec>;

/**
 * @example
 * TextPart.parse({ type: 'text', text: 'hello' });
 */
export const TextPart = z.object({ type: z.literal('text'), text: z.string() });
/**
 * @example
 * ToolCallPart.parse({ type: 'toolCall', id: 'tooluse_1', name: 'catering_quote', input: { sku: 'SKU-VANILLA', guests: 41 } });
 */
export const ToolCallPart = z.object({ type: z.literal('toolCall'), id: z.string().min(1), name: z.string().min(1), input: z.unknown() });
/**
 * @example
 * ToolResultPart.parse({ type: 'toolResult', toolCallId: 'tooluse_1', content: 'refused: another guest count', isError: true });
 */
export const ToolResultPart = z.object({
  type: z.literal('toolResult'),
  toolCallId: z.string().min(1),
  /** JSON the tool returned, or the refusal's text when `isError`. */
  content: z.unknown(),
  isError: z.boolean().default(false),
});
/**
 * @example
 * const part: ContentPart = { type: 'toolResult', toolCallId: 'tooluse_1', content: { tubs: 5 } };
 */
export const ContentPart = z.discriminatedUnion('type', [TextPart, ToolCallPart, ToolResultPart]);
export type ContentPart = z.input<typeof ContentPart>;
export type ToolCall = Omit<z.infer<typeof ToolCallPart>, 'type'>;

/**
 * @example
 * const turn: ModelMessage = { role: 'user', content: [{ type: 'text', text: '{"sku":"SKU-VANILLA","guests":41}' }] };
 */
export const ModelMessage = z.object({ role: z.enum(['user', 'assistant']), content: z.array(ContentPart).min(1) });
export type ModelMessage = z.input<typeof ModelMessage>;

/**
 * @example
 * await ctx.model.call({ messages, tools: [spec], toolChoice: { tool: spec.name } }); // force that tool
 */
export const ToolChoice = z.union([z.literal('auto'), z.literal('any'), z.object({ tool: z.string().min(1) })]);
export type ToolChoice = z.infer<typeof ToolChoice>;

/**
 * One request to a model.
 *
 * @example
 * ConverseRequest.parse({ system: 'You quote catering.', messages: [userText('…')], tools: [spec] });
 */
export const ConverseRequest = z.object({
  system: z.string().optional(),
  messages: z.array(ModelMessage).min(1),
  tools: z.array(ToolSpec).default([]),
  toolChoice: ToolChoice.optional(),
  maxTokens: z.int().min(1).optional(),
  /**
   * What the call is for (`classify-deductible`). Adapters may log it; the offline model uses it
   * to pick a scripted answer. It never changes what a real model is sent.
   */
  task: z.string().min(1).max(64).optional(),
});
export type ConverseRequest = z.input<typeof ConverseRequest>;
export type ParsedConverseRequest = z.infer<typeof ConverseRequest>;

/**
 * @example
 * if (reply.stopReason === 'max_tokens') throw new Error('reply cut short');
 */
export const StopReason = z.enum(['end_turn', 'tool_use', 'max_tokens', 'other']);
export type StopReason = z.infer<typeof StopReason>;

/**
 * @example
 * reply.usage // { inputTokens: 452, outputTokens: 87 }
 */
export const TokenUsage = z.object({ inputTokens: z.int().min(0), outputTokens: z.int().min(0) });
export type TokenUsage = z.infer<typeof TokenUsage>;

/**
 * One model reply: text, tool calls, or both.
 *
 * @example
 * const reply: ConverseResult = await ctx.model.call(request);
 * for (const call of reply.toolCalls) await ctx.tools.catering_quote(call.input);
 */
export const ConverseResult = z.object({
  text: z.string().optional(),
  toolCalls: z.array(ToolCallPart.omit({ type: true })).default([]),
  stopReason: StopReason,
  usage: TokenUsage,
});
export type ConverseResult = z.infer<typeof ConverseResult>;

/**
 * One model behind the common interface: the offline deterministic model or Bedrock Converse.
 *
 * @example
 * const reply = await adapter.converse({ messages: [userText('41 guests, SKU-VANILLA')], tools: [quoteSpec] });
 * reply.toolCalls[0]?.name // 'catering_quote'
 */
export interface ModelAdapter {
  /** `offline`, `offline:broaden`, or the Bedrock model id. */
  readonly id: string;
  converse(request: ConverseRequest, options?: { signal?: AbortSignal }): Promise<ConverseResult>;
}

/**
 * Reserves one model call against the durable allowance before it is made. The ledger
 * implements it (one conditional transaction over the subtask, run and tenant counters) and
 * rejects with errors the SDK recognises by name: `BudgetExhausted` (fields `limit`, `counter`),
 * `DeadlinePassed`; anything else (`LeaseLost`, `RunCancelled`) is passed on to the caller.
 * What it resolves with is ignored.
 *
 * @example
 * const budget: BudgetPort = { reserve: () => ledger.reserveBudget(claim) };
 */
export interface BudgetPort {
  reserve(): Promise<unknown>;
}

/**
 * `ctx.model.call` takes a converse request and, optionally, the estimate the worker expects.
 *
 * @example
 * await ctx.model.call({ messages: [userText('…')], estimatedCost: ctx.assignment.allowance.estimatedCostPerCall });
 */
export type ModelCallRequest = ConverseRequest & {
  /** Must equal the assignment's `estimatedCostPerCall` when given; a different value is refused. */
  readonly estimatedCost?: number;
};

/**
 * The model as a worker sees it: every call reserved, counted and bounded by the assignment.
 *
 * @example
 * const reply = await ctx.model.call({ task: 'classify-deductible', messages: [userText(prompt)], tools: [spec] });
 */
export interface WorkerModel {
  call(request: ModelCallRequest): Promise<ConverseResult>;
}

/**
 * Describes a tool for the model from a zod schema of its input.
 *
 * @example
 * const spec = toolSpec('catering_quote', 'Quote the assigned inquiry.', z.object({ sku: z.string(), guests: z.int() }));
 * spec.inputSchema.required // ['sku', 'guests']
 */
export const toolSpec = (name: string, description: string, input: z.ZodType): ToolSpec => {
  // Bedrock forwards the schema to the model; the `$schema` dialect marker is noise there.
  const { $schema: _dialect, ...inputSchema } = z.toJSONSchema(input, { io: 'input' }) as Record<string, unknown>;
  return ToolSpec.parse({ name, description, inputSchema });
};

/**
 * A user turn with one text block.
 *
 * @example
 * userText('{"sku":"SKU-VANILLA","guests":41}') // { role: 'user', content: [{ type: 'text', text: '…' }] }
 */
export const userText = (text: string): ModelMessage => ({ role: 'user', content: [{ type: 'text', text }] });

/**
 * The assistant turn to append to the conversation after a reply, so the next call sees it.
 *
 * @example
 * messages.push(assistantTurn(reply));
 */
export const assistantTurn = (reply: ConverseResult): ModelMessage => {
  const calls = reply.toolCalls.map((call) => ({ type: 'toolCall' as const, ...call }));
  // Providers refuse an empty turn, and a reply with neither text nor calls does happen (max_tokens).
  const text = reply.text || calls.length === 0 ? [{ type: 'text' as const, text: reply.text || '(no reply)' }] : [];
  return { role: 'assistant', content: [...text, ...calls] };
};

/**
 * The user turn that answers tool calls with their results (or refusals).
 *
 * @example
 * messages.push(toolResultsTurn([{ toolCallId: 'call-1', content: quote }]));
 */
export const toolResultsTurn = (results: readonly { toolCallId: string; content: unknown; isError?: boolean }[]): ModelMessage => ({
  role: 'user',
  content: results.map((result) => ({ type: 'toolResult' as const, isError: false, ...result })),
});
