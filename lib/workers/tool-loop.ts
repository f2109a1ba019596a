import { ScopeViolation } from './errors';
import { assistantTurn, toolResultsTurn, userText, type ModelMessage, type WorkerModel } from './model';
import type { KeyedTool } from './sources';

/**
 * The usual model-with-tools conversation, written once: ask, run the tools the model calls,
 * answer with their results, repeat until the model finishes or the turns run out. A scoped
 * tool's refusal goes back to the model as an error result (it is already recorded in the
 * outcome); any other error stops the conversation.
 *
 * @example
 * converseWithTools({ model: ctx.model, prompt, tools: { catering_quote: ctx.tools.catering_quote }, maxTurns: 2 });
 */

export interface ToolLoopOptions {
  readonly model: WorkerModel;
  readonly system?: string;
  /** The user's message; put the inquiry here as JSON. */
  readonly prompt: string;
  /** Scoped tools the model may call, by name. */
  readonly tools: Readonly<Record<string, KeyedTool<unknown>>>;
  /** Model calls at most; each is reserved against the allowance. */
  readonly maxTurns: number;
  readonly task?: string;
}

/**
 * @example
 * const { results, finished } = await converseWithTools(options);
 * if (!finished) throw new Error('the model ran out of turns');
 */
export interface ToolLoopResult {
  /** The model's last text. */
  readonly text: string | undefined;
  /** Model calls made. */
  readonly turns: number;
  /** What the tools returned, in call order; parse it with your own schema. Refused calls add nothing. */
  readonly results: readonly { readonly tool: string; readonly rows: readonly unknown[] }[];
  /** True when the model finished by itself rather than running out of turns. */
  readonly finished: boolean;
}

interface ToolAnswer {
  readonly toolCallId: string;
  readonly content: unknown;
  readonly isError: boolean;
  readonly rows?: readonly unknown[];
}

const answerCall = async (tools: ToolLoopOptions['tools'], call: { id: string; name: string; input: unknown }): Promise<ToolAnswer> => {
  const tool = tools[call.name];
  if (!tool) return { toolCallId: call.id, content: `no tool named ${call.name} is offered`, isError: true };
  try {
    const rows = await tool(call.input);
    return { toolCallId: call.id, content: { rows }, isError: false, rows };
  } catch (error) {
    if (error instanceof ScopeViolation) return { toolCallId: call.id, content: error.message, isError: true };
    throw error;
  }
};

/**
 * Runs the conversation.
 *
 * @example
 * const { results } = await converseWithTools({
 *   model: ctx.model, prompt: JSON.stringify(ctx.assignment.input),
 *   tools: { catering_quote: ctx.tools.catering_quote }, maxTurns: ctx.assignment.allowance.modelCalls,
 * });
 */
export const converseWithTools = async (options: ToolLoopOptions): Promise<ToolLoopResult> => {
  const specs = Object.values(options.tools).map((tool) => tool.spec);
  const messages: ModelMessage[] = [userText(options.prompt)];
  const results: { tool: string; rows: readonly unknown[] }[] = [];
  let text: string | undefined;
  for (let turn = 1; turn <= options.maxTurns; turn += 1) {
    const reply = await options.model.call({
      messages,
      tools: specs,
      ...(options.system === undefined ? {} : { system: options.system }),
      ...(options.task === undefined ? {} : { task: options.task }),
    });
    text = reply.text ?? text;
    messages.push(assistantTurn(reply));
    if (reply.toolCalls.length === 0) return { text, turns: turn, results, finished: true };
    const answers: ToolAnswer[] = [];
    for (const call of reply.toolCalls) {
      const answer = await answerCall(options.tools, call);
      if (answer.rows) results.push({ tool: call.name, rows: answer.rows });
      answers.push(answer);
    }
    messages.push(toolResultsTurn(answers.map(({ toolCallId, content, isError }) => ({ toolCallId, content, isError }))));
  }
  return { text, turns: options.maxTurns, results, finished: false };
};
