import { CfnTemplate, resourcesOfType } from '../template/reader';
import { renderDefinition, type AslStateMachine, type Intrinsic } from './asl';
import { DefinitionNotRenderable } from './errors';
import { HANDLER_METADATA_KEY } from './handler-metadata';

/*
 * Readers of a synthesized tessera template (`cdk.out/<Stack>.template.json`), for the local
 * cloud, the tests and the benchmarks: which module each function runs, and the state machine to
 * execute. They read the template through lib/template/reader.ts and import no CDK.
 */

/**
 * Handler entry of every tessera function, by logical id, from the `tessera:handler` metadata.
 *
 * @example
 * functionHandlers(JSON.parse(readFileSync('cdk.out/Tessera.template.json', 'utf8')))
 * // { FanOutDispatchFunctionEF273FA3: 'functions/dispatch.ts', … }
 */
export const functionHandlers = (template: unknown): Record<string, string> =>
  Object.fromEntries(
    resourcesOfType(CfnTemplate.parse(template), 'AWS::Lambda::Function').flatMap(({ logicalId, resource }) => {
      const entry = resource.Metadata?.[HANDLER_METADATA_KEY];
      return typeof entry === 'string' ? [[logicalId, entry]] : [];
    }),
  );

/** Whether a machine (or any Map or Parallel inside it) has a Task that starts another execution. */
const startsExecutions = (machine: AslStateMachine): boolean =>
  Object.values(machine.States).some(
    (state) =>
      (state.Type === 'Task' && (state.Resource ?? '').includes(':states:startExecution')) ||
      (state.ItemProcessor !== undefined && startsExecutions(state.ItemProcessor)),
  );

/** Every state machine of the template, rendered; the run's first, then the batch's (the one the run starts). */
const renderedMachines = (template: unknown, resolve?: (intrinsic: Intrinsic) => string): AslStateMachine[] => {
  const machines = resourcesOfType(CfnTemplate.parse(template), 'AWS::StepFunctions::StateMachine').map((m) =>
    renderDefinition(m.resource.Properties?.DefinitionString, resolve),
  );
  if (machines.length === 1) return machines;
  const run = machines.filter(startsExecutions);
  const batch = machines.filter((m) => !startsExecutions(m));
  if (machines.length !== 2 || run.length !== 1 || batch.length !== 1) {
    throw new DefinitionNotRenderable(`expected the run state machine and the batch state machine it starts, found ${machines.length} state machines`);
  }
  return [run[0]!, batch[0]!];
};

/**
 * The template's run state machine (the one that starts the batch machine's executions), rendered
 * to ASL. `resolve` maps intrinsics such as
 * `{ "Fn::GetAtt": ["FanOutDispatchFunctionEF273FA3", "Arn"] }` to the ARNs a runner uses;
 * without it they stay placeholders such as `${FanOutDispatchFunctionEF273FA3.Arn}`.
 *
 * @example
 * const asl = stateMachineDefinition(template, (intrinsic) => ('Ref' in intrinsic ? String(intrinsic.Ref) : 'arn:aws:lambda:us-east-1:000000000000:function:local'));
 * asl.States['Dispatch']?.Type // 'Task'
 */
export const stateMachineDefinition = (template: unknown, resolve?: (intrinsic: Intrinsic) => string): AslStateMachine => {
  const [machine] = renderedMachines(template, resolve);
  if (!machine) throw new DefinitionNotRenderable('expected a state machine in the template, found none');
  return machine;
};

/**
 * The template's batch state machine (one batch of a batched round), rendered to ASL.
 *
 * @example
 * batchStateMachineDefinition(template).StartAt // 'LoadBatch'
 */
export const batchStateMachineDefinition = (template: unknown, resolve?: (intrinsic: Intrinsic) => string): AslStateMachine => {
  const [, batch] = renderedMachines(template, resolve);
  if (!batch) throw new DefinitionNotRenderable('expected a batch state machine in the template, found only one state machine');
  return batch;
};
