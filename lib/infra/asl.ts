import { z } from 'zod';
import { createEvaluator } from '../template/reader';
import { DefinitionNotRenderable } from './errors';

/*
 * Amazon States Language, as far as tessera reads it: enough to check the run state machine's
 * shape in tests, count its history events, and run it in the local cloud. Unknown fields pass
 * through untouched.
 */

export const AslRetrier = z.looseObject({
  ErrorEquals: z.array(z.string()).min(1),
  IntervalSeconds: z.number().optional(),
  MaxAttempts: z.number().optional(),
  BackoffRate: z.number().optional(),
  MaxDelaySeconds: z.number().optional(),
  JitterStrategy: z.string().optional(),
});
export type AslRetrier = z.infer<typeof AslRetrier>;

export const AslCatcher = z.looseObject({
  ErrorEquals: z.array(z.string()).min(1),
  Next: z.string(),
  ResultPath: z.string().nullable().optional(),
});
export type AslCatcher = z.infer<typeof AslCatcher>;

export const AslState = z.looseObject({
  Type: z.enum(['Task', 'Choice', 'Wait', 'Succeed', 'Fail', 'Map', 'Parallel', 'Pass']),
  Next: z.string().optional(),
  End: z.boolean().optional(),
  Resource: z.string().optional(),
  Parameters: z.record(z.string(), z.unknown()).optional(),
  ResultSelector: z.record(z.string(), z.unknown()).optional(),
  ResultPath: z.string().nullable().optional(),
  OutputPath: z.string().optional(),
  TimeoutSeconds: z.number().optional(),
  TimeoutSecondsPath: z.string().optional(),
  Seconds: z.number().optional(),
  TimestampPath: z.string().optional(),
  Retry: z.array(AslRetrier).optional(),
  Catch: z.array(AslCatcher).optional(),
  Choices: z.array(z.record(z.string(), z.unknown())).optional(),
  Default: z.string().optional(),
  ItemsPath: z.string().optional(),
  MaxConcurrency: z.number().optional(),
  Error: z.string().optional(),
  Cause: z.string().optional(),
  get ItemProcessor() {
    return AslStateMachine.optional();
  },
});
export type AslState = z.infer<typeof AslState>;

export const AslStateMachine = z.looseObject({
  StartAt: z.string(),
  States: z.record(z.string(), AslState),
  TimeoutSeconds: z.number().optional(),
});
export type AslStateMachine = z.infer<typeof AslStateMachine>;

/** A CloudFormation intrinsic inside a definition, such as `{ "Fn::GetAtt": ["Fn1234", "Arn"] }`. */
export type Intrinsic = Readonly<Record<string, unknown>>;

/**
 * Writes an intrinsic as a readable placeholder: `${Fn1234.Arn}`, `${AWS::Partition}`. Neither
 * quotes nor backslashes appear, so the placeholder is safe inside a JSON string.
 */
export const placeholderFor = (intrinsic: Intrinsic): string => {
  const ref = intrinsic.Ref;
  if (typeof ref === 'string') return `\${${ref}}`;
  const getAtt = intrinsic['Fn::GetAtt'];
  if (Array.isArray(getAtt) && getAtt.every((part) => typeof part === 'string')) return `\${${getAtt.join('.')}}`;
  throw new DefinitionNotRenderable(`unsupported intrinsic ${Object.keys(intrinsic).join(', ')}`);
};

/**
 * Renders a CloudFormation string value (a plain string, or an `Fn::Join` or `Fn::Sub` over
 * strings and intrinsics) to text, writing each `Ref` and `Fn::GetAtt` with `resolve`.
 *
 * @example
 * renderIntrinsicString({ 'Fn::Join': ['', ['{"a":"', { Ref: 'Queue1' }, '"}']] }) // '{"a":"${Queue1}"}'
 */
export const renderIntrinsicString = (value: unknown, resolve: (intrinsic: Intrinsic) => string = placeholderFor): string =>
  createEvaluator({
    ref: (name) => resolve({ Ref: name }),
    attribute: (logicalId, attribute) => resolve({ 'Fn::GetAtt': [logicalId, attribute] }),
    error: (_path, detail) => new DefinitionNotRenderable(detail),
    unsupported: (intrinsic) => new DefinitionNotRenderable(`unsupported intrinsic ${intrinsic}`),
  }).resolveString(value, 'DefinitionString');

/**
 * Renders a synthesized `DefinitionString` (a string or CDK's `Fn::Join` over strings and
 * intrinsics) to a parsed state machine. Intrinsics become placeholders unless `resolve` maps
 * them, which is how the local cloud substitutes its own function ARNs.
 *
 * @example
 * const [resource] = Object.values(template.findResources('AWS::StepFunctions::StateMachine'));
 * const asl = renderDefinition(resource.Properties.DefinitionString);
 * asl.States['Dispatch']?.Resource // 'arn:${AWS::Partition}:states:::lambda:invoke'
 */
export const renderDefinition = (definitionString: unknown, resolve: (intrinsic: Intrinsic) => string = placeholderFor): AslStateMachine => {
  const json = renderIntrinsicString(definitionString, resolve);
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    throw new DefinitionNotRenderable('the rendered definition is not JSON', { cause: error });
  }
  const machine = AslStateMachine.safeParse(parsed);
  if (!machine.success) throw new DefinitionNotRenderable('the rendered JSON is not a state machine', { cause: machine.error });
  return machine.data;
};

/**
 * A state of a machine or of any Map's item processor, by name; names are unique across both.
 *
 * @example
 * findState(asl, 'Await')?.TimeoutSecondsPath // '$.Payload.timeoutSeconds'
 */
export const findState = (machine: AslStateMachine, name: string): AslState | undefined => {
  const own = machine.States[name];
  if (own) return own;
  for (const state of Object.values(machine.States)) {
    const inner = state.ItemProcessor ? findState(state.ItemProcessor, name) : undefined;
    if (inner) return inner;
  }
  return undefined;
};
