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

/**
 * The template's one state machine, rendered to ASL. `resolve` maps intrinsics such as
 * `{ "Fn::GetAtt": ["FanOutDispatchFunctionEF273FA3", "Arn"] }` to the ARNs a runner uses;
 * without it they stay placeholders such as `${FanOutDispatchFunctionEF273FA3.Arn}`.
 *
 * @example
 * const asl = stateMachineDefinition(template, (intrinsic) => ('Ref' in intrinsic ? String(intrinsic.Ref) : 'arn:aws:lambda:us-east-1:000000000000:function:local'));
 * asl.States['Dispatch']?.Type // 'Task'
 */
export const stateMachineDefinition = (template: unknown, resolve?: (intrinsic: Intrinsic) => string): AslStateMachine => {
  const machines = resourcesOfType(CfnTemplate.parse(template), 'AWS::StepFunctions::StateMachine');
  const [machine] = machines;
  if (machines.length !== 1 || !machine) throw new DefinitionNotRenderable(`expected one state machine in the template, found ${machines.length}`);
  return renderDefinition(machine.resource.Properties?.DefinitionString, resolve);
};
