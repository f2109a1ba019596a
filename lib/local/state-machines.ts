import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { z } from 'zod';
import { definitionKey, type ValidatedDefinitions } from './definition-cache';
import { TemplateResolutionError, UnsupportedFeatureError } from './errors';
import type { TemplateEntry } from '../template/reader';
import { checkProperties, propertyPath, RESOURCE_TYPES, type TemplateResolver } from './template';

/**
 * The template's state machines, with the definition CDK synthesized (never a hand-written copy),
 * checked up front for what aws-local-stepfunctions and the callback emulation can run.
 */

/**
 * The optimized Lambda integration with a task token: the only callback Task emulated locally.
 *
 * @example
 * machine.callbackTasks.get('Await')?.Resource === LAMBDA_INVOKE_CALLBACK
 */
export const LAMBDA_INVOKE_CALLBACK = 'arn:aws:states:::lambda:invoke.waitForTaskToken';
const LAMBDA_INVOKE = 'arn:aws:states:::lambda:invoke';

/**
 * Starting a child execution and waiting for it, JSON output (`.sync:2`): the one Step Functions
 * integration the local cloud answers itself, by starting the template's child state machine in
 * process (a batched round's StartBatch, docs/deadlines.md).
 */
export const START_EXECUTION_SYNC = 'arn:aws:states:::states:startExecution.sync:2';

/**
 * The fields of a StartBatch-like Task the local cloud reads. `TimeoutSeconds` is required: the
 * local interpreter's default is 60 s, AWS has none, and a child may run for a whole deadline.
 */
export const StartExecutionTask = z.looseObject({
  Type: z.literal('Task'),
  Resource: z.literal(START_EXECUTION_SYNC),
  TimeoutSeconds: z.number().int().min(1),
});
export type StartExecutionTask = z.infer<typeof StartExecutionTask>;

/**
 * The fields of a Task state the callback emulation reads.
 *
 * @example
 * CallbackTask.parse({ Type: 'Task', Resource: LAMBDA_INVOKE_CALLBACK, TimeoutSecondsPath: '$.Payload.timeoutSeconds' })
 */
export const CallbackTask = z.looseObject({
  Type: z.literal('Task'),
  Resource: z.literal(LAMBDA_INVOKE_CALLBACK),
  TimeoutSeconds: z.number().optional(),
  TimeoutSecondsPath: z.string().optional(),
});
export type CallbackTask = z.infer<typeof CallbackTask>;

/** One AWS::StepFunctions::StateMachine, ready to run. */
export interface LocalStateMachine {
  readonly logicalId: string;
  readonly name: string;
  readonly arn: string;
  readonly type: 'STANDARD' | 'EXPRESS';
  readonly definition: StateMachineDefinition;
  /** Callback Tasks by state name (names are unique across the whole machine, nested ones included). */
  readonly callbackTasks: ReadonlyMap<string, CallbackTask>;
  /** `startExecution.sync:2` Tasks by state name: the local cloud starts the child and waits for it. */
  readonly startExecutionTasks: ReadonlyMap<string, StartExecutionTask>;
  /** The other Lambda Tasks: their `Resource` (a function ARN or `lambda:invoke`) by state name. */
  readonly lambdaTasks: ReadonlyMap<string, string>;
  /** The validated machine; `run()` may be called once per execution. */
  readonly machine: StateMachine;
}

const StateMachineProperties = z.object({
  StateMachineName: z.string().optional(),
  StateMachineType: z.enum(['STANDARD', 'EXPRESS']).default('STANDARD'),
  DefinitionString: z.string().optional(),
  Definition: z.record(z.string(), z.unknown()).optional(),
  DefinitionSubstitutions: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
});
const STATE_MACHINE_PROPERTIES = [...Object.keys(StateMachineProperties.shape), 'RoleArn'];
/** Logging, tracing, encryption and tags have no local effect. */
const INERT_STATE_MACHINE_PROPERTIES = ['LoggingConfiguration', 'TracingConfiguration', 'EncryptionConfiguration', 'Tags'];

const States = z.record(z.string(), z.looseObject({ Type: z.string() }));
type States = z.infer<typeof States>;
const Definition = z.looseObject({ StartAt: z.string(), States, QueryLanguage: z.string().optional() });

interface Walk {
  readonly path: string;
  readonly functionArns: ReadonlySet<string>;
  readonly callbacks: Map<string, CallbackTask>;
  readonly starts: Map<string, StartExecutionTask>;
  readonly lambdaTasks: Map<string, string>;
  readonly seen: Set<string>;
}

const nestedMachines = (state: Record<string, unknown>): unknown[] => {
  const branches = Array.isArray(state.Branches) ? state.Branches : [];
  return [state.ItemProcessor, state.Iterator, ...branches].filter((machine) => machine !== undefined);
};

const checkTask = (name: string, state: Record<string, unknown>, walk: Walk): void => {
  const resource = state.Resource;
  const where = `${walk.path} state ${name}`;
  if (resource === LAMBDA_INVOKE_CALLBACK) {
    if (state.HeartbeatSeconds !== undefined || state.HeartbeatSecondsPath !== undefined) throw new UnsupportedFeatureError(where, 'HeartbeatSeconds');
    walk.callbacks.set(name, CallbackTask.parse(state));
    return;
  }
  if (resource === START_EXECUTION_SYNC) {
    const task = StartExecutionTask.safeParse(state);
    if (!task.success) throw new UnsupportedFeatureError(where, `${START_EXECUTION_SYNC} without an explicit TimeoutSeconds (the local default is 60 s)`);
    walk.starts.set(name, task.data);
    return;
  }
  if (typeof resource === 'string' && (resource === LAMBDA_INVOKE || walk.functionArns.has(resource))) {
    walk.lambdaTasks.set(name, resource);
    return;
  }
  throw new UnsupportedFeatureError(
    where,
    `Task resource ${String(resource)} (local Tasks may invoke the template's functions, directly or through lambda:invoke[.waitForTaskToken], or start a template state machine through ${START_EXECUTION_SYNC})`,
  );
};

const checkState = (name: string, state: Record<string, unknown>, walk: Walk): void => {
  if (walk.seen.has(name)) throw new UnsupportedFeatureError(`${walk.path} state ${name}`, 'a state name used twice (local overrides are keyed by state name)');
  walk.seen.add(name);
  if (state.QueryLanguage === 'JSONata' || state.Arguments !== undefined || state.Assign !== undefined) {
    throw new UnsupportedFeatureError(`${walk.path} state ${name}`, 'JSONata or Variables');
  }
  const processor = state.ItemProcessor as { ProcessorConfig?: { Mode?: string } } | undefined;
  if (processor?.ProcessorConfig?.Mode === 'DISTRIBUTED' || state.ItemReader !== undefined) {
    throw new UnsupportedFeatureError(`${walk.path} state ${name}`, 'a Distributed Map');
  }
  if (state.Type === 'Task') checkTask(name, state, walk);
  for (const machine of nestedMachines(state)) walkStates(machine, walk);
};

const walkStates = (machine: unknown, walk: Walk): void => {
  const parsed = Definition.safeParse(machine);
  if (!parsed.success) throw new TemplateResolutionError(walk.path, `the definition is not a state machine: ${z.prettifyError(parsed.error)}`);
  if (parsed.data.QueryLanguage === 'JSONata') throw new UnsupportedFeatureError(walk.path, 'QueryLanguage JSONata');
  for (const [name, state] of Object.entries(parsed.data.States as States)) checkState(name, state, walk);
};

const substitute = (text: string, substitutions: Readonly<Record<string, string | number | boolean>>): string =>
  text.replace(/\$\{([^}]+)\}/g, (whole, key: string) => (key in substitutions ? String(substitutions[key]) : whole));

const definitionText = (props: z.infer<typeof StateMachineProperties>, path: string): string => {
  const text = props.DefinitionString ?? (props.Definition ? JSON.stringify(props.Definition) : undefined);
  if (text === undefined) throw new UnsupportedFeatureError(path, 'a definition that is neither DefinitionString nor Definition (DefinitionS3Location)');
  return props.DefinitionSubstitutions ? substitute(text, props.DefinitionSubstitutions) : text;
};

const parseDefinition = (text: string, path: string): unknown => {
  try {
    const value: unknown = JSON.parse(text);
    return value;
  } catch (error) {
    throw new TemplateResolutionError(path, `the resolved definition is not JSON: ${(error as Error).message}`, { cause: error });
  }
};

const VALIDATION = { checkArn: true, checkPaths: true } as const;

/** The machine, validated by aws-local-stepfunctions (asl-validator) unless this definition passed before. */
const validatedMachine = (definition: StateMachineDefinition, path: string, validated: ValidatedDefinitions | undefined): StateMachine => {
  const key = validated ? definitionKey(definition, VALIDATION) : '';
  if (validated?.has(key)) return new StateMachine(definition, { validationOptions: { noValidate: true } });
  let machine: StateMachine;
  try {
    machine = new StateMachine(definition, { validationOptions: VALIDATION });
  } catch (error) {
    throw new TemplateResolutionError(path, (error as Error).message, { cause: error });
  }
  validated?.add(key);
  return machine;
};

const describeStateMachine = (
  entry: TemplateEntry,
  resolver: TemplateResolver,
  functionArns: ReadonlySet<string>,
  validated: ValidatedDefinitions | undefined,
): LocalStateMachine => {
  checkProperties(entry, STATE_MACHINE_PROPERTIES, INERT_STATE_MACHINE_PROPERTIES);
  const path = propertyPath(entry.logicalId);
  const { RoleArn: _role, ...rest } = entry.resource.Properties ?? {};
  const props = StateMachineProperties.parse(resolver.resolve(rest, path));
  const definitionPath = propertyPath(entry.logicalId, props.DefinitionString === undefined ? 'Definition' : 'DefinitionString');
  const definition = parseDefinition(definitionText(props, path), definitionPath);
  const callbacks = new Map<string, CallbackTask>();
  const starts = new Map<string, StartExecutionTask>();
  const lambdaTasks = new Map<string, string>();
  walkStates(definition, { path: definitionPath, functionArns, callbacks, starts, lambdaTasks, seen: new Set() });
  const physical = resolver.physical(entry.logicalId);
  return {
    logicalId: entry.logicalId,
    name: physical.attributes.Name as string,
    arn: physical.ref,
    type: props.StateMachineType,
    definition: definition as StateMachineDefinition,
    callbackTasks: callbacks,
    startExecutionTasks: starts,
    lambdaTasks,
    machine: validatedMachine(definition as StateMachineDefinition, definitionPath, validated),
  };
};

/**
 * Every state machine of the template, its definition resolved from the synthesized template and
 * validated, a machine that starts others first. Task resources must be the template's own
 * functions (directly or through `lambda:invoke`) or `startExecution.sync:2` of one of its state
 * machines, so nothing can reach a real AWS service. With `validated`, a definition that
 * passed validation before is not validated again (lib/local/definition-cache.ts).
 *
 * @example
 * const [pipeline] = stateMachinesFromTemplate(resolver);
 * pipeline.callbackTasks.has('Await'); // true
 */
export const stateMachinesFromTemplate = (resolver: TemplateResolver, options: { validated?: ValidatedDefinitions } = {}): LocalStateMachine[] => {
  const functionArns = new Set(resolver.entries(RESOURCE_TYPES.function).map((entry) => resolver.physical(entry.logicalId).attributes.Arn as string));
  const machines = resolver.entries(RESOURCE_TYPES.stateMachine).map((entry) => describeStateMachine(entry, resolver, functionArns, options.validated));
  // A machine that starts others (the run's, which starts its batches') is the entry point: first.
  return [...machines.filter((m) => m.startExecutionTasks.size > 0), ...machines.filter((m) => m.startExecutionTasks.size === 0)];
};
