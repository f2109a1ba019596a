import { App, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { CfnQueue } from 'aws-cdk-lib/aws-sqs';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { stackPropsFromContext } from '../../lib/infra/app-context';
import { InvalidConstructProps } from '../../lib/infra/errors';
import { parseFanOutSettings, type FanOutSettingsInput } from '../../lib/infra/fan-out-settings';
import { SubtaskQueues } from '../../lib/infra/subtask-queues';
import { TesseraFanOut } from '../../lib/infra/fan-out';
import { exampleWorkerModule } from '../../examples/app/cdk';
import { unbundledApp } from './synth';

const valid: FanOutSettingsInput = {
  auth: { issuer: 'https://issuer.example.com', audiences: ['client-1'], tenantClaim: 'custom:tenant' },
  corsAllowedOrigins: [],
  throttle: { rateLimit: 20, burstLimit: 40 },
  kinds: { 'tax-statements': {} },
  workerTimeoutSeconds: 120,
  workerBatchingWindowSeconds: 0,
  maxDeadlineSeconds: 900,
  mapMaxConcurrency: 40,
  batchConcurrency: 40,
  tenantDailyAllowance: { modelCalls: 10, costLimit: 100 },
  degradedRunRateThreshold: 0.05,
  serviceName: 'tessera',
  model: { provider: 'offline' },
};

const problemsOf = (input: FanOutSettingsInput): readonly string[] => {
  try {
    parseFanOutSettings('Test/FanOut', input);
    return [];
  } catch (error) {
    if (error instanceof InvalidConstructProps) return error.problems;
    throw error;
  }
};

describe('fan-out props validation', () => {
  test('defaults a kind without a cap to 5', () => {
    expect(parseFanOutSettings('Test/FanOut', valid).kinds).toEqual({ 'tax-statements': { maxConcurrency: 5 } });
  });

  test('names every problem with its path at once', () => {
    const problems = problemsOf({
      ...valid,
      kinds: { 'scout-crm': { maxConcurrency: 1 }, 'scout-news': {} },
      mapMaxConcurrency: 41,
      batchConcurrency: 0,
      model: { provider: 'bedrock', modelId: '' },
    });
    expect(problems.map((p) => p.split(':')[0])).toEqual(['kinds.scout-crm.maxConcurrency', 'mapMaxConcurrency', 'batchConcurrency', 'model.modelId']);
  });

  test('a registry without kinds is refused', () => {
    expect(problemsOf({ ...valid, kinds: {} })).toEqual(['kinds: the worker registry needs at least one worker kind']);
  });

  test('rejects a non-https issuer, an empty audience list and an origin with a path', () => {
    const problems = problemsOf({
      ...valid,
      auth: { issuer: 'http://issuer.example.com', audiences: [], tenantClaim: 'custom:tenant' },
      corsAllowedOrigins: ['https://app.example.com/login'],
    });
    expect(problems.map((p) => p.split(':')[0])).toEqual(['auth.issuer', 'auth.audiences', 'corsAllowedOrigins.0']);
  });

  test('property: an event-source concurrency is accepted exactly when Lambda accepts it (2..1000)', () => {
    fc.assert(
      fc.property(fc.integer({ min: -5, max: 1_100 }), (cap) => {
        const accepted = problemsOf({ ...valid, kinds: { 'scout-news': { maxConcurrency: cap } } }).length === 0;
        expect(accepted).toBe(cap >= 2 && cap <= 1000);
      }),
    );
  });

  test('property: a worker timeout is accepted exactly when Lambda allows it (1..900 s)', () => {
    fc.assert(
      fc.property(fc.integer({ min: -10, max: 2_000 }), (seconds) => {
        expect(problemsOf({ ...valid, workerTimeoutSeconds: seconds }).length === 0).toBe(seconds >= 1 && seconds <= 900);
      }),
    );
  });

  test('property: a batching window is accepted exactly when Lambda allows it for SQS (whole seconds, 0..300)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer({ min: -10, max: 400 }), fc.double({ min: -1, max: 301, noNaN: true })), (seconds) => {
        expect(problemsOf({ ...valid, workerBatchingWindowSeconds: seconds }).length === 0).toBe(Number.isInteger(seconds) && seconds >= 0 && seconds <= 300);
      }),
    );
  });

  test('a fractional batching window fails synth with the setting named, not rounded', () => {
    const stack = new Stack(new App(), 'HalfSecond');
    let refused: unknown;
    try {
      new TesseraFanOut(stack, 'FanOut', {
        auth: { issuer: 'https://issuer.example.com', audiences: ['a'] },
        workers: { entry: exampleWorkerModule({ faultInjection: false }) },
        workerBatchingWindow: Duration.millis(500),
      });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(InvalidConstructProps);
    expect((refused as InvalidConstructProps).problems.map((p) => p.split(':')[0])).toEqual(['workerBatchingWindowSeconds']);
  });

  test('the construct refuses bad props at synth time with InvalidConstructProps', () => {
    const stack = new Stack(new App(), 'Bad');
    expect(
      () =>
        new TesseraFanOut(stack, 'FanOut', {
          auth: { issuer: 'https://issuer.example.com', audiences: ['a'] },
          workers: { entry: exampleWorkerModule({ faultInjection: false }) },
          mapMaxConcurrency: 0,
        }),
    ).toThrow(InvalidConstructProps);
  });
});

describe('subtask queues', () => {
  test('property: visibility timeout is 6 × worker timeout + batching window, never below the worker timeout', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 900 }), fc.integer({ min: 0, max: 5 }), (timeout, window) => {
        const stack = new Stack(new App(), 'Queues');
        const queues = new SubtaskQueues(stack, 'Queues', {
          workerKinds: [{ kind: 'scout-news' }],
          workerTimeout: Duration.seconds(timeout),
          batchingWindow: Duration.seconds(window),
        });
        // The L1 property, not a synthesized template: the full-stack tests cover the template.
        const visibility = (queues.queues['scout-news']?.node.defaultChild as CfnQueue).visibilityTimeout;
        expect(visibility).toBe(6 * timeout + window);
        expect(visibility).toBeGreaterThanOrEqual(timeout);
      }),
    );
  });
});

describe('app context', () => {
  const contextOf = (values: Record<string, unknown>) => new App({ context: values }).node;

  test('defaults to a retained, protected, offline stack named Tessera', () => {
    expect(stackPropsFromContext(contextOf({}))).toEqual({
      stackName: 'Tessera',
      faultInjection: false,
      emulator: false,
      props: {
        alarmEmail: undefined,
        fanOut: { removalPolicy: RemovalPolicy.RETAIN, deletionProtection: true, corsAllowedOrigins: [], model: { provider: 'offline' } },
      },
    });
  });

  test('destroy turns deletion protection off; command-line strings are parsed', () => {
    const { stackName, faultInjection, emulator, props } = stackPropsFromContext(
      contextOf({
        'tessera:stackName': 'TesseraDev',
        'tessera:removalPolicy': 'destroy',
        'tessera:corsOrigins': 'https://a.example.com, https://b.example.com',
        'tessera:model': 'bedrock',
        'tessera:bedrockModelId': 'anthropic.claude-3-haiku-20240307-v1:0',
        'tessera:faultInjection': 'true',
        'tessera:emulator': 'true',
      }),
    );
    expect(stackName).toBe('TesseraDev');
    expect(faultInjection).toBe(true);
    expect(emulator).toBe(true);
    expect(props.fanOut).toEqual({
      removalPolicy: RemovalPolicy.DESTROY,
      deletionProtection: false,
      corsAllowedOrigins: ['https://a.example.com', 'https://b.example.com'],
      model: { provider: 'bedrock', modelId: 'anthropic.claude-3-haiku-20240307-v1:0' },
    });
  });

  test('the batch keys reach the fan-out as numbers (the emulator lane sets both)', () => {
    const { props } = stackPropsFromContext(contextOf({ 'tessera:batchSubtasks': '5', 'tessera:batchConcurrency': '4' }));
    expect(props.fanOut).toMatchObject({ batchSubtasks: 5, batchConcurrency: 4 });
  });

  test('an explicit deletionProtection=true wins over destroy', () => {
    const { props } = stackPropsFromContext(contextOf({ 'tessera:removalPolicy': 'destroy', 'tessera:deletionProtection': 'true' }));
    expect(props.fanOut?.deletionProtection).toBe(true);
  });

  test('bedrock without a model id, or a bad value, fails naming the context key', () => {
    expect(() => stackPropsFromContext(contextOf({ 'tessera:model': 'bedrock' }))).toThrow(/tessera:bedrockModelId: is required/);
    expect(() => stackPropsFromContext(contextOf({ 'tessera:removalPolicy': 'snapshot' }))).toThrow(/tessera:removalPolicy/);
  });
});

describe('a deprecated prop', () => {
  test('inlineSubtasks still compiles, changes nothing and says so in a synth warning', () => {
    const fanOut = new TesseraFanOut(new Stack(unbundledApp(), 'Deprecated'), 'FanOut', {
      auth: { issuer: 'https://issuer.example.com', audiences: ['a'] },
      workers: { entry: exampleWorkerModule({ faultInjection: false }) },
      inlineSubtasks: 1000,
    });
    const warnings = fanOut.node.metadata.filter((entry) => entry.type === 'aws:cdk:warning').map((entry) => String(entry.data));
    expect(warnings).toEqual([expect.stringMatching(/^inlineSubtasks is ignored: every round runs as batches/)]);
  });
});
