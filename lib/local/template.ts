import { z } from 'zod';
import { CfnTemplate, createEvaluator, outputValues, resourcesOfType, type CfnParameter, type CfnResource, type TemplateEntry } from '../template/reader';
import { TemplateResolutionError, UnsupportedFeatureError } from './errors';

/**
 * Resolves a synthesized CloudFormation template's intrinsics into the local cloud's physical
 * values. Resolution is lazy and per value: only the properties the harness needs are resolved, so
 * an IAM role or an asset bucket that nothing local reads never matters. Anything it cannot
 * resolve throws with the template path; it never guesses. Reading the template and evaluating
 * its intrinsics is lib/template/reader.ts's; this module says what `Ref` and `Fn::GetAtt` are
 * locally.
 */

/**
 * The account every local ARN uses; fauxqs uses the same one in its queue ARNs.
 *
 * @example
 * `arn:aws:sqs:us-east-1:${LOCAL_ACCOUNT_ID}:Work`
 */
export const LOCAL_ACCOUNT_ID = '000000000000';
const PARTITION = 'aws';
const URL_SUFFIX = 'amazonaws.com';

/**
 * The CloudFormation types the local cloud emulates.
 *
 * @example
 * resolver.entries(RESOURCE_TYPES.table, RESOURCE_TYPES.globalTable)
 */
export const RESOURCE_TYPES = {
  table: 'AWS::DynamoDB::Table',
  globalTable: 'AWS::DynamoDB::GlobalTable',
  queue: 'AWS::SQS::Queue',
  function: 'AWS::Lambda::Function',
  eventSourceMapping: 'AWS::Lambda::EventSourceMapping',
  stateMachine: 'AWS::StepFunctions::StateMachine',
  httpApi: 'AWS::ApiGatewayV2::Api',
  route: 'AWS::ApiGatewayV2::Route',
  integration: 'AWS::ApiGatewayV2::Integration',
  authorizer: 'AWS::ApiGatewayV2::Authorizer',
  stage: 'AWS::ApiGatewayV2::Stage',
  eventRule: 'AWS::Events::Rule',
  lambdaPermission: 'AWS::Lambda::Permission',
  eventInvokeConfig: 'AWS::Lambda::EventInvokeConfig',
} as const;

/** Where the local cloud runs, which fixes the physical values the template resolves to. */
export interface LocalEnvironment {
  readonly region: string;
  /** @default '000000000000' */
  readonly accountId?: string;
  /** @default 'tessera-local' */
  readonly stackName?: string;
  /** The URL the SQS emulator gives a queue of this name. */
  readonly queueUrl: (queueName: string) => string;
  /** Base URL of the local HTTP API, for `Fn::GetAtt <Api>.ApiEndpoint`. */
  readonly httpApiUrl?: string;
  /** Values for template parameters that have no usable default. */
  readonly parameters?: Readonly<Record<string, string>>;
  /**
   * Prepended to the table and queue names derived from logical IDs, so several local clouds can
   * share one DynamoDB Local and one SQS emulator (as the integration tests do).
   * @default ''
   */
  readonly namePrefix?: string;
}

/** What `Ref` and `Fn::GetAtt` return for one emulated resource. */
export interface PhysicalResource {
  readonly ref: string;
  readonly attributes: Readonly<Record<string, string>>;
}

/**
 * Resolves template values against one local environment.
 *
 * @example
 * const resolver = createResolver(template, { region: 'us-east-1', queueUrl: (n) => `http://q/${n}` });
 * resolver.resolveString({ 'Fn::GetAtt': ['Work', 'Arn'] }, 'Outputs.QueueArn');
 * // 'arn:aws:sqs:us-east-1:000000000000:Work'
 */
export interface TemplateResolver {
  readonly template: CfnTemplate;
  readonly region: string;
  readonly accountId: string;
  /** Resolves every intrinsic inside `value`; `path` names it in errors. */
  resolve(value: unknown, path: string): unknown;
  /** Resolves `value` and requires a string (numbers and booleans are written as CloudFormation would). */
  resolveString(value: unknown, path: string): string;
  /** `Ref` and attributes of an emulated resource. */
  physical(logicalId: string): PhysicalResource;
  /** Emulated resources of one or more types, in logical-ID order. */
  entries(...types: readonly string[]): TemplateEntry[];
}

/**
 * Validates a synthesized template's outline (Resources, Parameters).
 *
 * @example
 * const template = parseTemplate(app.synth().getStackByName('Stack').template);
 */
export const parseTemplate = (json: unknown): CfnTemplate => {
  const parsed = CfnTemplate.safeParse(json);
  if (!parsed.success) throw new TemplateResolutionError('(template)', `not a CloudFormation template: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
};

/**
 * Refuses properties the local cloud would silently ignore. `handled` are emulated; `inert` have
 * no local effect by design (encryption, tags, billing) and are accepted.
 *
 * @example
 * checkProperties(entry, ['QueueName', 'VisibilityTimeout'], ['Tags']);
 */
export const checkProperties = (entry: TemplateEntry, handled: readonly string[], inert: readonly string[]): void => {
  for (const key of Object.keys(entry.resource.Properties ?? {})) {
    if (!handled.includes(key) && !inert.includes(key)) {
      throw new UnsupportedFeatureError(propertyPath(entry.logicalId, key), `${entry.resource.Type} property ${key}`);
    }
  }
};

/**
 * The template path of a resource property, as errors print it.
 *
 * @example
 * propertyPath('Work', 'RedrivePolicy') // 'Resources.Work.Properties.RedrivePolicy'
 */
export const propertyPath = (logicalId: string, ...keys: readonly (string | number)[]): string => ['Resources', logicalId, 'Properties', ...keys].join('.');

interface PhysicalContext {
  readonly logicalId: string;
  readonly env: ResolvedEnvironment;
  /** The resolved string of a naming property, or `fallback` when the template leaves it out. */
  name(property: string, fallback: string): string;
  property(key: string): unknown;
}

type ResolvedEnvironment = Required<Pick<LocalEnvironment, 'region' | 'accountId' | 'stackName' | 'namePrefix'>> & LocalEnvironment;

const arn = (env: ResolvedEnvironment, service: string, resource: string): string => `arn:${PARTITION}:${service}:${env.region}:${env.accountId}:${resource}`;

const isTrue = (value: unknown): boolean => value === true || value === 'true';

const tablePhysical = (ctx: PhysicalContext): PhysicalResource => {
  const name = ctx.name('TableName', `${ctx.env.namePrefix}${ctx.logicalId}`);
  return { ref: name, attributes: { Arn: arn(ctx.env, 'dynamodb', `table/${name}`) } };
};

const queuePhysical = (ctx: PhysicalContext): PhysicalResource => {
  const fifo = isTrue(ctx.property('FifoQueue'));
  const derived = `${ctx.env.namePrefix}${ctx.logicalId}`;
  const name = ctx.name('QueueName', fifo ? `${derived}.fifo` : derived);
  const url = ctx.env.queueUrl(name);
  return { ref: url, attributes: { Arn: arn(ctx.env, 'sqs', name), QueueName: name, QueueUrl: url } };
};

const functionPhysical = (ctx: PhysicalContext): PhysicalResource => {
  const name = ctx.name('FunctionName', ctx.logicalId);
  return { ref: name, attributes: { Arn: arn(ctx.env, 'lambda', `function:${name}`) } };
};

const stateMachinePhysical = (ctx: PhysicalContext): PhysicalResource => {
  const name = ctx.name('StateMachineName', ctx.logicalId);
  const stateMachineArn = arn(ctx.env, 'states', `stateMachine:${name}`);
  return { ref: stateMachineArn, attributes: { Arn: stateMachineArn, Name: name } };
};

/** An EventBridge rule on the default bus: `Ref` is its name. */
const eventRulePhysical = (ctx: PhysicalContext): PhysicalResource => {
  const name = ctx.name('Name', `${ctx.env.namePrefix}${ctx.logicalId}`);
  return { ref: name, attributes: { Arn: arn(ctx.env, 'events', `rule/${name}`) } };
};

/** API Gateway IDs are 10 lower-case characters; a stable one per logical ID keeps URLs and logs readable. */
const apiId = (logicalId: string): string =>
  logicalId
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '')
    .padEnd(10, '0')
    .slice(0, 10);

const httpApiPhysical = (ctx: PhysicalContext): PhysicalResource => ({
  ref: apiId(ctx.logicalId),
  attributes: { ApiId: apiId(ctx.logicalId), ...(ctx.env.httpApiUrl ? { ApiEndpoint: ctx.env.httpApiUrl } : {}) },
});

/**
 * Resources with no local behaviour whose names a template still passes around: a state
 * machine's log group and role, say. They resolve to plausible identifiers and nothing else.
 */
const inertPhysical =
  (service: string, resourcePrefix: string, scope: 'regional' | 'global' = 'regional') =>
  (ctx: PhysicalContext): PhysicalResource => {
    const id = `${ctx.env.namePrefix}${ctx.logicalId}`;
    // IAM is global: its ARNs carry no region.
    const env = scope === 'global' ? { ...ctx.env, region: '' } : ctx.env;
    return { ref: id, attributes: { Arn: arn(env, service, `${resourcePrefix}${id}`) } };
  };

/** Routes, integrations, authorizers and stages are only linked to each other by ID locally. */
const idOnlyPhysical = (ctx: PhysicalContext): PhysicalResource => ({ ref: ctx.logicalId, attributes: {} });

const PHYSICAL: Readonly<Record<string, (ctx: PhysicalContext) => PhysicalResource>> = {
  [RESOURCE_TYPES.table]: tablePhysical,
  [RESOURCE_TYPES.globalTable]: tablePhysical,
  [RESOURCE_TYPES.queue]: queuePhysical,
  [RESOURCE_TYPES.function]: functionPhysical,
  [RESOURCE_TYPES.stateMachine]: stateMachinePhysical,
  [RESOURCE_TYPES.httpApi]: httpApiPhysical,
  [RESOURCE_TYPES.route]: idOnlyPhysical,
  [RESOURCE_TYPES.integration]: idOnlyPhysical,
  [RESOURCE_TYPES.authorizer]: idOnlyPhysical,
  [RESOURCE_TYPES.stage]: idOnlyPhysical,
  [RESOURCE_TYPES.eventRule]: eventRulePhysical,
  'AWS::Logs::LogGroup': inertPhysical('logs', 'log-group:'),
  'AWS::IAM::Role': inertPhysical('iam', 'role/', 'global'),
  'AWS::KMS::Key': inertPhysical('kms', 'key/'),
  'AWS::SNS::Topic': inertPhysical('sns', ''),
};

/**
 * Builds the resolver for one template and local environment.
 *
 * @example
 * const resolver = createResolver(template, { region: 'eu-west-1', queueUrl: (name) => `${sqs}/000000000000/${name}` });
 * const env = resolver.resolve(fn.Properties?.Environment, propertyPath('Dispatch', 'Environment'));
 */
export const createResolver = (template: CfnTemplate, environment: LocalEnvironment): TemplateResolver => {
  const env: ResolvedEnvironment = { accountId: LOCAL_ACCOUNT_ID, stackName: 'tessera-local', namePrefix: '', ...environment };
  const cache = new Map<string, PhysicalResource>();
  const visiting = new Set<string>();

  const pseudo: Readonly<Record<string, () => string>> = {
    'AWS::Region': () => env.region,
    'AWS::AccountId': () => env.accountId,
    'AWS::Partition': () => PARTITION,
    'AWS::URLSuffix': () => URL_SUFFIX,
    'AWS::StackName': () => env.stackName,
    'AWS::StackId': () => arn(env, 'cloudformation', `stack/${env.stackName}/00000000-0000-0000-0000-000000000000`),
  };

  const parameter = (name: string, declared: CfnParameter, path: string): string | string[] => {
    const given = env.parameters?.[name];
    if (given !== undefined) return given;
    if (declared.Type.startsWith('AWS::SSM::Parameter::Value')) {
      throw new TemplateResolutionError(path, `parameter ${name} is read from SSM in AWS; pass its local value in parameters`);
    }
    if (declared.Default === undefined) throw new TemplateResolutionError(path, `parameter ${name} has no Default; pass its local value in parameters`);
    const text = String(declared.Default);
    return declared.Type === 'CommaDelimitedList' || declared.Type.startsWith('List<') ? text.split(',') : text;
  };

  const resourceOf = (logicalId: string, path: string): CfnResource => {
    const resource = template.Resources[logicalId];
    if (!resource) throw new TemplateResolutionError(path, `no resource or parameter named ${logicalId}`);
    return resource;
  };

  const physical = (logicalId: string, path = `Resources.${logicalId}`): PhysicalResource => {
    const known = cache.get(logicalId);
    if (known) return known;
    const resource = resourceOf(logicalId, path);
    const factory = PHYSICAL[resource.Type];
    if (!factory) throw new TemplateResolutionError(path, `${logicalId} is a ${resource.Type}, which the local cloud does not emulate`);
    if (visiting.has(logicalId)) throw new TemplateResolutionError(path, `the name of ${logicalId} refers to itself`);
    visiting.add(logicalId);
    try {
      const properties = resource.Properties ?? {};
      const result = factory({
        logicalId,
        env,
        property: (key) => resolve(properties[key], propertyPath(logicalId, key)),
        name: (key, fallback) => (properties[key] === undefined ? fallback : resolveString(properties[key], propertyPath(logicalId, key))),
      });
      cache.set(logicalId, result);
      return result;
    } finally {
      visiting.delete(logicalId);
    }
  };

  const error = (path: string, detail: string): TemplateResolutionError => new TemplateResolutionError(path, detail);

  const ref = (target: string, path: string): unknown => {
    const pseudoValue = pseudo[target];
    if (pseudoValue) return pseudoValue();
    if (target.startsWith('AWS::')) throw error(path, `pseudo parameter ${target} is not supported locally`);
    const declared = template.Parameters?.[target];
    if (declared) return parameter(target, declared, path);
    return physical(target, path).ref;
  };

  const attribute = (logicalId: string, name: string, path: string): string => {
    const resource = physical(logicalId, path);
    const value = resource.attributes[name];
    if (value === undefined) {
      const known = Object.keys(resource.attributes).join(', ') || 'none';
      throw error(path, `Fn::GetAtt ${logicalId}.${name} is not emulated (emulated attributes: ${known})`);
    }
    return value;
  };

  const { resolve, resolveString } = createEvaluator({
    ref,
    attribute,
    error,
    unsupported: (intrinsic, path) => error(path, `intrinsic ${intrinsic} is not supported by the local cloud`),
  });

  const entries = (...types: readonly string[]): TemplateEntry[] =>
    resourcesOfType(template, ...types).map((entry) => {
      const { Condition } = entry.resource;
      if (Condition) throw new UnsupportedFeatureError(`Resources.${entry.logicalId}`, `Condition ${Condition}`);
      return entry;
    });

  return { template, region: env.region, accountId: env.accountId, resolve, resolveString, physical: (id) => physical(id), entries };
};

/**
 * The template's Outputs, resolved to local values, as `describe-stacks` would list them for a
 * deployed stack. Tests that only need outputs then run the same against either.
 *
 * @example
 * resolveOutputs(resolver).DeadLetterQueueUrl // 'http://sqs.us-east-1.localhost:4566/000000000000/…'
 */
export const resolveOutputs = (resolver: TemplateResolver): Record<string, string> =>
  Object.fromEntries(Object.entries(outputValues(resolver.template)).map(([name, value]) => [name, resolver.resolveString(value, `Outputs.${name}.Value`)]));
