import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MODEL_ENV } from '../../lib/workers/models/config';
import { createBedrockAdapter, createModelProvider, ModelCallFailed, parseModelConfig, runSubtask, toolSpec, userText } from '../../lib/workers';
import { CateringInquiry, referenceRegistry } from '../../examples/app';
import recorded from './fixtures/bedrock-converse-catering.json' with { type: 'json' };
import { dispatched, memoryAllowance } from './support/harness';

/**
 * The Bedrock adapter against recorded Converse responses. The SDK client gets a request
 * handler that answers from the fixture instead of the network, and keeps every request it was
 * given, so the tests see both what the adapter sent and what it made of the answer.
 */

const RecordedResponse = z.object({ statusCode: z.int(), headers: z.record(z.string(), z.string()), body: z.unknown() });
const Fixture = z.object({ modelId: z.string(), responses: z.array(RecordedResponse).min(2), throttled: RecordedResponse });
const fixture = Fixture.parse(recorded);

interface SentRequest {
  readonly method: string;
  readonly hostname: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: unknown;
}

/** The SDK hands over the JSON body as a string or as its UTF-8 bytes, depending on the protocol code path. */
const SentShape = z.object({
  method: z.string(),
  hostname: z.string(),
  path: z.string(),
  headers: z.record(z.string(), z.string()),
  body: z.union([z.string(), z.instanceof(Uint8Array).transform((bytes) => new TextDecoder().decode(bytes))]),
});

/** A client whose HTTP layer replays `responses` in order and records the requests. */
const replaying = (responses: readonly z.infer<typeof RecordedResponse>[]) => {
  const sent: SentRequest[] = [];
  let next = 0;
  const client = new BedrockRuntimeClient({
    region: 'eu-west-2',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
    maxAttempts: 1,
    requestHandler: {
      handle: async (request: unknown) => {
        const http = SentShape.parse(request);
        sent.push({ ...http, body: JSON.parse(http.body) });
        const response = responses[next++];
        if (!response) throw new Error('the test made more requests than were recorded');
        return { response: { statusCode: response.statusCode, headers: response.headers, body: new TextEncoder().encode(JSON.stringify(response.body)) } };
      },
    },
  });
  return { client, sent };
};

const QUOTE_TOOL = toolSpec('catering_quote', 'Calculate the draft quote for the assigned inquiry.', CateringInquiry);
const INQUIRY = '{"sku":"SKU-VANILLA","guests":41}';

describe('the Bedrock Converse adapter', () => {
  it('sends tools as toolSpec with a JSON schema and reads the toolUse block back', async () => {
    const { client, sent } = replaying(fixture.responses);
    const adapter = createBedrockAdapter({ client, modelId: fixture.modelId });
    const reply = await adapter.converse({ system: 'Prepare a catering draft quote.', messages: [userText(INQUIRY)], tools: [QUOTE_TOOL] });

    expect(sent).toHaveLength(1);
    const [request] = sent;
    expect(request?.method).toBe('POST');
    expect(request?.hostname).toBe('bedrock-runtime.eu-west-2.amazonaws.com');
    expect(request?.path).toBe('/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['authorization']).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-2\/bedrock\/aws4_request/);
    expect(request?.body).toEqual({
      messages: [{ role: 'user', content: [{ text: INQUIRY }] }],
      system: [{ text: 'Prepare a catering draft quote.' }],
      inferenceConfig: { maxTokens: 1024, temperature: 0 },
      toolConfig: {
        tools: [
          {
            toolSpec: {
              name: 'catering_quote',
              description: 'Calculate the draft quote for the assigned inquiry.',
              inputSchema: {
                json: {
                  type: 'object',
                  properties: { sku: { type: 'string', minLength: 1, maxLength: 100 }, guests: { type: 'integer', minimum: 1, maximum: 200 } },
                  required: ['sku', 'guests'],
                  additionalProperties: false,
                },
              },
            },
          },
        ],
      },
    });

    expect(reply).toEqual({
      text: "I'll prepare the draft quote for this inquiry.",
      toolCalls: [{ id: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', name: 'catering_quote', input: { sku: 'SKU-VANILLA', guests: 41 } }],
      stopReason: 'tool_use',
      usage: { inputTokens: 452, outputTokens: 87 },
    });
  });

  it('forces a tool with toolChoice when the request names one', async () => {
    const { client, sent } = replaying(fixture.responses);
    await createBedrockAdapter({ client, modelId: fixture.modelId }).converse({
      messages: [userText(INQUIRY)],
      tools: [QUOTE_TOOL],
      toolChoice: { tool: 'catering_quote' },
      maxTokens: 200,
    });
    expect(sent[0]?.body).toMatchObject({ inferenceConfig: { maxTokens: 200 }, toolConfig: { toolChoice: { tool: { name: 'catering_quote' } } } });
  });

  it('turns a throttled call into ModelCallFailed naming the service error', async () => {
    const { client } = replaying([fixture.throttled]);
    const failure = await createBedrockAdapter({ client, modelId: fixture.modelId })
      .converse({ messages: [userText(INQUIRY)] })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ModelCallFailed);
    expect(failure).toMatchObject({ adapter: 'bedrock', model: fixture.modelId, errorName: 'ThrottlingException' });
  });
});

describe('the catering worker on Bedrock', () => {
  it('runs the recorded two-turn conversation and sends the tool result back as a toolResult block', async () => {
    const { client, sent } = replaying(fixture.responses);
    const models = createModelProvider({
      config: parseModelConfig({ [MODEL_ENV.provider]: 'bedrock', [MODEL_ENV.modelId]: fixture.modelId }),
      bedrockClient: () => client,
    });
    const outcome = await runSubtask({
      subtask: dispatched({
        id: 'Q',
        worker: 'catering-quote',
        assigned: { ids: ['SKU-VANILLA'] },
        input: { sku: 'SKU-VANILLA', guests: 41 },
        budget: { modelCalls: 2, estimatedCostPerCall: 7 },
      }),
      registry: referenceRegistry,
      budget: memoryAllowance(2).port(),
      models,
    });

    expect(outcome).toMatchObject({
      state: 'ok',
      findings: { sku: 'SKU-VANILLA', guests: 41, tubs: 5, totalPence: 2500 },
      usage: { modelCalls: 2, estimatedCost: 14 },
      baseline: { matched: true, workerModelCalls: 2, baselineModelCalls: 0 },
    });
    const quote = {
      sku: 'SKU-VANILLA',
      guests: 41,
      portionsPerTub: 10,
      tubs: 5,
      totalPence: 2500,
      currency: 'GBP',
      status: 'DRAFT_QUOTE',
      stockReserved: false,
    };
    expect(sent[1]?.body).toMatchObject({
      messages: [
        { role: 'user', content: [{ text: INQUIRY }] },
        {
          role: 'assistant',
          content: [
            { text: "I'll prepare the draft quote for this inquiry." },
            { toolUse: { toolUseId: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', name: 'catering_quote', input: { sku: 'SKU-VANILLA', guests: 41 } } },
          ],
        },
        { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', status: 'success', content: [{ json: { rows: [quote] } }] } }] },
      ],
    });
  });
});
