import { z } from 'zod';

/*
 * The one reader of a synthesized CloudFormation template (`cdk.out/<Stack>.template.json`, or
 * `app.synth().getStackByName(…).template`): its outline, its resources by type, its outputs, and
 * the intrinsics (`Ref`, `Fn::GetAtt`, `Fn::Join`, `Fn::Sub`, `Fn::Select`, `Fn::Split`) its
 * values use. It imports no CDK, so the CDK library, the local cloud and the benchmarks all read
 * templates through it. It throws nothing of its own: what `Ref` and `Fn::GetAtt` mean, and which
 * error a value it cannot read becomes, are its caller's (see {@link IntrinsicSemantics}).
 */

/** One resource of a CloudFormation template, as much of it as tessera reads. */
export const CfnResource = z.looseObject({
  Type: z.string(),
  Properties: z.record(z.string(), z.unknown()).optional(),
  Metadata: z.record(z.string(), z.unknown()).optional(),
  Condition: z.string().optional(),
});
export type CfnResource = z.infer<typeof CfnResource>;

/** A template parameter: its type and default. */
export const CfnParameter = z.looseObject({ Type: z.string(), Default: z.unknown().optional() });
export type CfnParameter = z.infer<typeof CfnParameter>;

/**
 * The outline of a synthesized template. Anything else it holds (Rules, Conditions) is kept but
 * not read.
 *
 * @example
 * const template = CfnTemplate.parse(app.synth().getStackByName('Tessera').template);
 */
export const CfnTemplate = z.looseObject({
  Resources: z.record(z.string(), CfnResource),
  Parameters: z.record(z.string(), CfnParameter).optional(),
  Outputs: z.record(z.string(), z.looseObject({ Value: z.unknown() })).optional(),
});
export type CfnTemplate = z.infer<typeof CfnTemplate>;

/** One resource of the template with its logical ID. */
export interface TemplateEntry {
  readonly logicalId: string;
  readonly resource: CfnResource;
}

/**
 * The resources of one or more types, in logical-ID order.
 *
 * @example
 * resourcesOfType(template, 'AWS::Lambda::Function').map((entry) => entry.logicalId) // ['FanOutApiFunction…', …]
 */
export const resourcesOfType = (template: CfnTemplate, ...types: readonly string[]): TemplateEntry[] =>
  Object.entries(template.Resources)
    .filter(([, resource]) => types.includes(resource.Type))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([logicalId, resource]) => ({ logicalId, resource }));

/**
 * The template's outputs, each as its unresolved `Value`.
 *
 * @example
 * outputValues(template).ApiUrl // { 'Fn::Join': ['', ['https://', { Ref: 'Api' }, …]] }
 */
export const outputValues = (template: CfnTemplate): Record<string, unknown> =>
  Object.fromEntries(Object.entries(template.Outputs ?? {}).map(([name, output]) => [name, output.Value]));

/**
 * What the two referring intrinsics mean to one reader, and how it fails. The local cloud maps
 * them to its physical values; the state machine renderer to placeholders or local ARNs.
 */
export interface IntrinsicSemantics {
  /** `{ "Ref": name }`: a resource, a parameter or a pseudo parameter such as `AWS::Region`. */
  ref(name: string, path: string): unknown;
  /** `{ "Fn::GetAtt": [logicalId, attribute] }`. */
  attribute(logicalId: string, attribute: string, path: string): unknown;
  /** The reader's own error for a value it cannot read at `path`. */
  error(path: string, detail: string): Error;
  /** The reader's own error for an intrinsic this evaluator does not know, such as `Fn::ImportValue`. */
  unsupported(intrinsic: string, path: string): Error;
}

/** Evaluates template values under one {@link IntrinsicSemantics}. */
export interface IntrinsicEvaluator {
  /** Resolves every intrinsic inside `value`; `path` names it in errors. */
  resolve(value: unknown, path: string): unknown;
  /** Resolves `value` and requires a string (numbers and booleans are written as CloudFormation would). */
  resolveString(value: unknown, path: string): string;
}

type Evaluate = (argument: unknown, path: string) => unknown;

const describe = (value: unknown): string => JSON.stringify(value)?.slice(0, 120) ?? String(value);

/**
 * The evaluator of CloudFormation's string and list intrinsics over the given `Ref` and
 * `Fn::GetAtt`. `Fn::GetAtt` takes `[LogicalId, Attribute]` or `"LogicalId.Attribute"`;
 * `Fn::Sub` resolves `${Name}` and `${LogicalId.Attribute}` and keeps `${!Literal}` as `${Literal}`.
 *
 * @example
 * const { resolveString } = createEvaluator({ ref: (name) => `<${name}>`, attribute: (id, a) => `<${id}.${a}>`, error: (path, detail) => new Error(`${path}: ${detail}`), unsupported: (name) => new Error(name) });
 * resolveString({ 'Fn::Join': ['/', [{ Ref: 'Queue' }, 'x']] }, 'Outputs.Url.Value') // '<Queue>/x'
 */
export const createEvaluator = (semantics: IntrinsicSemantics): IntrinsicEvaluator => {
  const { error } = semantics;

  const pair = (name: string, argument: unknown, path: string): [unknown, unknown] => {
    if (!Array.isArray(argument) || argument.length !== 2) throw error(path, `${name} needs two arguments, got ${describe(argument)}`);
    return [argument[0], argument[1]];
  };

  const scalarText = (value: unknown, path: string): string => {
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    throw error(path, `expected a string, got ${describe(value)}`);
  };

  const stringList = (name: string, value: unknown, path: string): string[] => {
    const list = resolve(value, path);
    if (!Array.isArray(list)) throw error(path, `${name} needs a list, got ${describe(list)}`);
    return list.map((item, index) => scalarText(item, `${path}.${index}`));
  };

  const ref: Evaluate = (target, path) => {
    if (typeof target !== 'string') throw error(path, `Ref needs a name, got ${describe(target)}`);
    return semantics.ref(target, path);
  };

  const getAttParts = (argument: unknown, path: string): [string, string] => {
    if (typeof argument === 'string') {
      const dot = argument.indexOf('.');
      if (dot > 0) return [argument.slice(0, dot), argument.slice(dot + 1)];
    } else if (Array.isArray(argument) && argument.length === 2) {
      const [logicalId, attribute] = [argument[0], resolve(argument[1], `${path}.1`)];
      if (typeof logicalId === 'string' && typeof attribute === 'string') return [logicalId, attribute];
    }
    throw error(path, `Fn::GetAtt needs [LogicalId, Attribute], got ${describe(argument)}`);
  };

  const getAtt: Evaluate = (argument, path) => semantics.attribute(...getAttParts(argument, path), path);

  const join: Evaluate = (argument, path) => {
    const [delimiter, list] = pair('Fn::Join', argument, path);
    if (typeof delimiter !== 'string') throw error(path, `Fn::Join needs a string delimiter, got ${describe(delimiter)}`);
    return stringList('Fn::Join', list, `${path}.1`).join(delimiter);
  };

  const select: Evaluate = (argument, path) => {
    const [rawIndex, list] = pair('Fn::Select', argument, path);
    const index = Number(resolve(rawIndex, `${path}.0`));
    const items = resolve(list, `${path}.1`);
    if (!Array.isArray(items) || !Number.isInteger(index) || index < 0 || index >= items.length) {
      throw error(path, `Fn::Select index ${describe(rawIndex)} is outside ${describe(items)}`);
    }
    return items[index];
  };

  const split: Evaluate = (argument, path) => {
    const [delimiter, source] = pair('Fn::Split', argument, path);
    if (typeof delimiter !== 'string' || delimiter === '') throw error(path, `Fn::Split needs a non-empty string delimiter`);
    return resolveString(source, `${path}.1`).split(delimiter);
  };

  const sub: Evaluate = (argument, path) => {
    const [text, variables] = Array.isArray(argument) ? pair('Fn::Sub', argument, path) : [argument, {}];
    if (typeof text !== 'string') throw error(path, `Fn::Sub needs a string, got ${describe(text)}`);
    const values = resolve(variables, `${path}.1`);
    if (typeof values !== 'object' || values === null || Array.isArray(values)) throw error(path, `Fn::Sub variables must be an object`);
    return text.replace(/\$\{([^}]*)\}/g, (_whole, name: string) => {
      if (name.startsWith('!')) return `\${${name.slice(1)}}`;
      if (name in values) return scalarText((values as Record<string, unknown>)[name], `${path}.1.${name}`);
      return name.includes('.') && !name.startsWith('AWS::') ? scalarText(getAtt(name, path), path) : scalarText(ref(name, path), path);
    });
  };

  const intrinsics: Readonly<Record<string, Evaluate>> = {
    Ref: ref,
    'Fn::GetAtt': getAtt,
    'Fn::Join': join,
    'Fn::Sub': sub,
    'Fn::Select': select,
    'Fn::Split': split,
  };

  const resolve = (value: unknown, path: string): unknown => {
    if (Array.isArray(value)) return value.map((item, index) => resolve(item, `${path}.${index}`));
    if (value === null || typeof value !== 'object') return value;
    const keys = Object.keys(value);
    const only = keys.length === 1 ? keys[0] : undefined;
    if (only !== undefined && (only === 'Ref' || only.startsWith('Fn::'))) {
      const intrinsic = intrinsics[only];
      if (!intrinsic) throw semantics.unsupported(only, path);
      return intrinsic((value as Record<string, unknown>)[only], `${path}.${only}`);
    }
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolve(item, `${path}.${key}`)]));
  };

  const resolveString = (value: unknown, path: string): string => scalarText(resolve(value, path), path);

  return { resolve, resolveString };
};
