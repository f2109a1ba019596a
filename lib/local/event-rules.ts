import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { TemplateResolutionError, UnsupportedFeatureError } from './errors';
import type { LambdaInvoker } from './lambda-client';
import { silentLog, type LocalLog } from './log';
import type { TemplateEntry } from '../template/reader';
import { checkProperties, propertyPath, RESOURCE_TYPES, type TemplateResolver } from './template';

/**
 * Emulates EventBridge rules on the default bus that target the template's Lambda functions: an
 * event the local cloud publishes (a Step Functions execution status change) is matched against
 * each rule's EventPattern and delivered to its targets as Lambda delivers an asynchronous
 * invocation: the function's own retries (its EventInvokeConfig), then its on-failure
 * destination. A delivery EventBridge cannot make (no resource policy lets the rule invoke the
 * function) goes to the target's dead-letter queue, as in AWS. Rules, patterns, targets, retry
 * settings and queues all come from the template.
 */

/** An event as EventBridge delivers it: `source`, `detail-type`, `detail` and the envelope. */
export type BusEvent = Readonly<Record<string, unknown>>;

/** Where a failed delivery goes: an SQS queue of the template. */
interface QueueRef {
  readonly arn: string;
  readonly url: string;
}

/** One target of a rule, resolved. */
export interface EventRuleTarget {
  readonly id: string;
  readonly functionName: string;
  readonly functionArn: string;
  /** The target's DeadLetterConfig: deliveries EventBridge could not make. */
  readonly deadLetterQueue: QueueRef | undefined;
  /** Whether an `AWS::Lambda::Permission` lets this rule invoke the function. */
  readonly permitted: boolean;
  /** Lambda's retries of a failed asynchronous invocation (EventInvokeConfig, default 2). */
  readonly functionRetryAttempts: number;
  /** The function's on-failure destination (EventInvokeConfig), when it is one of the template's queues. */
  readonly onFailure: QueueRef | undefined;
}

/** One rule of the template, resolved. */
export interface EventRule {
  readonly logicalId: string;
  readonly arn: string;
  readonly enabled: boolean;
  readonly pattern: Readonly<Record<string, unknown>>;
  readonly targets: readonly EventRuleTarget[];
}

const RuleProperties = z.object({
  EventPattern: z.record(z.string(), z.unknown()),
  Targets: z.array(z.record(z.string(), z.unknown())).min(1),
  State: z.enum(['ENABLED', 'DISABLED']).default('ENABLED'),
  EventBusName: z.literal('default').optional(),
});
const RULE_PROPERTIES = ['EventPattern', 'Targets', 'State', 'EventBusName'];
const INERT_RULE_PROPERTIES = ['Name', 'Description'];

const Target = z.object({
  Id: z.string().min(1),
  Arn: z.string().min(1),
  DeadLetterConfig: z.object({ Arn: z.string().min(1) }).optional(),
  // EventBridge's own retry of a delivery it could not make; locally a refused delivery is not retried.
  RetryPolicy: z.object({ MaximumRetryAttempts: z.coerce.number().optional(), MaximumEventAgeInSeconds: z.coerce.number().optional() }).optional(),
});
const TARGET_PROPERTIES = ['Id', 'Arn', 'DeadLetterConfig', 'RetryPolicy'];

const InvokeConfig = z.object({
  FunctionName: z.string(),
  Qualifier: z.string(),
  MaximumRetryAttempts: z.coerce.number().int().min(0).max(2).optional(),
  DestinationConfig: z.object({ OnFailure: z.object({ Destination: z.string() }).optional() }).optional(),
});

/** Lambda's default retries of an asynchronous invocation. */
const DEFAULT_FUNCTION_RETRIES = 2;
/** Lambda waits about a minute, then two, before retrying; locally a second, then two. */
const LOCAL_RETRY_DELAYS_MS = [1_000, 2_000];

/** Only exact-value patterns are emulated: every leaf is a list of values, every branch an object. */
const checkPattern = (pattern: unknown, path: string): void => {
  if (typeof pattern !== 'object' || pattern === null || Array.isArray(pattern))
    throw new UnsupportedFeatureError(path, 'an EventPattern that is not an object');
  for (const [key, value] of Object.entries(pattern)) {
    if (Array.isArray(value)) {
      const filter = value.find((item) => typeof item === 'object' && item !== null);
      if (filter !== undefined) throw new UnsupportedFeatureError(`${path}.${key}`, `EventPattern content filter ${JSON.stringify(filter)}`);
    } else checkPattern(value, `${path}.${key}`);
  }
};

/**
 * Whether `event` matches an exact-value EventBridge pattern: every field the pattern names is
 * present with one of the listed values (an array field matches if any element does).
 *
 * @example
 * matchesPattern({ detail: { status: ['FAILED', 'ABORTED'] } }, { detail: { status: 'ABORTED' } }) // true
 */
export const matchesPattern = (pattern: Readonly<Record<string, unknown>>, event: unknown): boolean =>
  Object.entries(pattern).every(([key, expected]) => {
    const actual = typeof event === 'object' && event !== null ? (event as Record<string, unknown>)[key] : undefined;
    if (Array.isArray(expected)) return (Array.isArray(actual) ? actual : [actual]).some((value) => value !== undefined && expected.includes(value));
    return matchesPattern(expected as Record<string, unknown>, actual);
  });

interface TemplateFunctions {
  readonly functions: readonly { name: string; arn: string }[];
  readonly queues: readonly { queueArn: string; queueUrl: string }[];
}

const describeRule = (entry: TemplateEntry, resolver: TemplateResolver, known: TemplateFunctions): EventRule => {
  checkProperties(entry, RULE_PROPERTIES, INERT_RULE_PROPERTIES);
  const path = propertyPath(entry.logicalId);
  const parsed = RuleProperties.safeParse(resolver.resolve(entry.resource.Properties ?? {}, path));
  if (!parsed.success) throw new TemplateResolutionError(path, z.prettifyError(parsed.error));
  checkPattern(parsed.data.EventPattern, propertyPath(entry.logicalId, 'EventPattern'));
  const arn = resolver.physical(entry.logicalId).attributes.Arn as string;
  const queue = (queueArn: string | undefined, where: string): QueueRef | undefined => {
    if (queueArn === undefined) return undefined;
    const found = known.queues.find((q) => q.queueArn === queueArn);
    if (!found) throw new UnsupportedFeatureError(where, `dead-letter target ${queueArn} (only this template's SQS queues are emulated)`);
    return { arn: queueArn, url: found.queueUrl };
  };
  const targets = parsed.data.Targets.map((raw, index): EventRuleTarget => {
    const where = propertyPath(entry.logicalId, 'Targets', index);
    for (const key of Object.keys(raw)) {
      if (!TARGET_PROPERTIES.includes(key)) throw new UnsupportedFeatureError(`${where}.${key}`, `EventBridge target property ${key}`);
    }
    const target = Target.parse(raw);
    const fn = known.functions.find((f) => f.arn === target.Arn);
    if (!fn) throw new UnsupportedFeatureError(`${where}.Arn`, `target ${target.Arn} (only this template's Lambda functions are emulated)`);
    const config = asyncConfig(resolver, fn);
    return {
      id: target.Id,
      functionName: fn.name,
      functionArn: fn.arn,
      deadLetterQueue: queue(target.DeadLetterConfig?.Arn, `${where}.DeadLetterConfig`),
      permitted: permits(resolver, fn, arn),
      functionRetryAttempts: config?.MaximumRetryAttempts ?? DEFAULT_FUNCTION_RETRIES,
      onFailure: queue(config?.DestinationConfig?.OnFailure?.Destination, `${where} (EventInvokeConfig OnFailure)`),
    };
  });
  return { logicalId: entry.logicalId, arn, enabled: parsed.data.State === 'ENABLED', pattern: parsed.data.EventPattern, targets };
};

/** Whether some `AWS::Lambda::Permission` lets EventBridge invoke `fn` for this rule. */
const permits = (resolver: TemplateResolver, fn: { name: string; arn: string }, ruleArn: string): boolean =>
  resolver.entries(RESOURCE_TYPES.lambdaPermission).some((entry) => {
    const props = z
      .looseObject({ Action: z.string(), FunctionName: z.string(), Principal: z.string(), SourceArn: z.string().optional() })
      .safeParse(resolver.resolve(entry.resource.Properties ?? {}, propertyPath(entry.logicalId)));
    if (!props.success) return false;
    const { Action, FunctionName, Principal, SourceArn } = props.data;
    return (
      ['lambda:InvokeFunction', 'lambda:*'].includes(Action) &&
      [fn.name, fn.arn].includes(FunctionName) &&
      Principal === 'events.amazonaws.com' &&
      (SourceArn === undefined || SourceArn === ruleArn)
    );
  });

/** The function's EventInvokeConfig for `$LATEST`, if the template has one. */
const asyncConfig = (resolver: TemplateResolver, fn: { name: string; arn: string }): z.infer<typeof InvokeConfig> | undefined =>
  resolver
    .entries(RESOURCE_TYPES.eventInvokeConfig)
    .map((entry) => InvokeConfig.parse(resolver.resolve(entry.resource.Properties ?? {}, propertyPath(entry.logicalId))))
    .find((config) => [fn.name, fn.arn].includes(config.FunctionName) && config.Qualifier === '$LATEST');

/**
 * The template's EventBridge rules, each targeting the template's own functions.
 *
 * @example
 * const rules = eventRulesFromTemplate(resolver, { functions, queues });
 */
export const eventRulesFromTemplate = (resolver: TemplateResolver, known: TemplateFunctions): EventRule[] =>
  resolver.entries(RESOURCE_TYPES.eventRule).map((entry) => describeRule(entry, resolver, known));

/** The running rules: publish events to them; `stop()` ends deliveries in progress. */
export interface EventBus {
  readonly rules: readonly EventRule[];
  /** Delivers `event` to every enabled rule that matches it, in the background. */
  publish(event: BusEvent): void;
  /** Resolves when every delivery started so far has ended (delivered, or dead-lettered). */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts delivering published events to the rules' targets.
 *
 * @example
 * const bus = startEventBus({ rules, lambda, sqs, log });
 * executions.onStatusChange((record) => bus.publish(executionStatusChangeEvent(record, where)));
 */
export const startEventBus = (options: { rules: readonly EventRule[]; lambda: LambdaInvoker; sqs: SQSClient; log?: LocalLog }): EventBus => {
  const log = options.log ?? silentLog;
  const inFlight = new Set<Promise<void>>();
  const stopping = new AbortController();

  const sendTo = async (queue: QueueRef, body: unknown, attributes: Record<string, string>): Promise<void> => {
    await options.sqs.send(
      new SendMessageCommand({
        QueueUrl: queue.url,
        MessageBody: JSON.stringify(body),
        MessageAttributes: Object.fromEntries(Object.entries(attributes).map(([name, value]) => [name, { DataType: 'String', StringValue: value }])),
      }),
    );
  };

  const deliver = async (rule: EventRule, target: EventRuleTarget, event: BusEvent): Promise<void> => {
    if (!target.permitted) {
      log({
        level: 'warn',
        component: 'events',
        message: `rule ${rule.logicalId} may not invoke ${target.functionName}: no AWS::Lambda::Permission for events.amazonaws.com`,
      });
      if (target.deadLetterQueue) {
        await sendTo(target.deadLetterQueue, event, {
          RULE_ARN: rule.arn,
          TARGET_ARN: target.functionArn,
          ERROR_CODE: 'NO_PERMISSIONS',
          ERROR_MESSAGE: 'EventBridge is not allowed to invoke the function',
        });
      }
      return;
    }
    const requestId = randomUUID();
    for (let attempt = 0; ; attempt += 1) {
      const result = await options.lambda.invoke(target.functionName, event);
      if (result.ok) return;
      log({ level: 'warn', component: 'events', message: `${target.functionName} failed an event of rule ${rule.logicalId}: ${result.error.errorType}` });
      if (attempt >= target.functionRetryAttempts || stopping.signal.aborted) {
        if (target.onFailure) {
          await sendTo(
            target.onFailure,
            {
              version: '1.0',
              timestamp: new Date().toISOString(),
              requestContext: { requestId, functionArn: `${target.functionArn}:$LATEST`, condition: 'RetriesExhausted', approximateInvokeCount: attempt + 1 },
              requestPayload: event,
              responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
              responsePayload: result.error,
            },
            {},
          );
        }
        return;
      }
      await sleep(LOCAL_RETRY_DELAYS_MS[attempt] ?? LOCAL_RETRY_DELAYS_MS.at(-1), undefined, { signal: stopping.signal }).catch(() => undefined);
    }
  };

  const track = (delivery: Promise<void>): void => {
    const settled = delivery.catch((error: unknown) =>
      log({ level: 'error', component: 'events', message: `an event delivery failed: ${(error as Error).message}` }),
    );
    inFlight.add(settled);
    void settled.finally(() => inFlight.delete(settled));
  };

  return {
    rules: options.rules,
    publish: (event) => {
      if (stopping.signal.aborted) return;
      for (const rule of options.rules) {
        if (!rule.enabled || !matchesPattern(rule.pattern, event)) continue;
        for (const target of rule.targets) track(deliver(rule, target, event));
      }
    },
    idle: async () => {
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
    stop: async () => {
      stopping.abort();
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
  };
};
