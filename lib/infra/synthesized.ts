import { z } from 'zod';
import { renderDefinition, type AslStateMachine, type Intrinsic } from './asl';
import { DefinitionNotRenderable } from './errors';
import { HANDLER_METADATA_KEY } from './tessera-function';

/*
 * Readers of a synthesized tessera template (`cdk.out/<Stack>.template.json`), for the local
 * cloud and the tests: which module each function runs, and the state machine to execute.
 */

const TemplateResource = z.looseObject({
  Type: z.string(),
  Properties: z.record(z.string(), z.unknown()).optional(),
  Metadata: z.record(z.string(), z.unknown()).optional(),
});

/** The part of a CloudFormation template these readers need. */
export const SynthesizedTemplate = z.looseObject({ Resources: z.record(z.string(), TemplateResource) });
export type SynthesizedTemplate = z.infer<typeof SynthesizedTemplate>;

/**
 * Handler entry of every tessera function, by logical id, from the `tessera:handler` metadata.
 *
 * @example
 * functionHandlers(JSON.parse(readFileSync('cdk.out/Tessera.template.json', 'utf8')))
 * // { FanOutDispatchFunctionEF273FA3: 'functions/dispatch.ts', … }
 */
export const functionHandlers = (template: unknown): Record<string, string> => {
  const { Resources } = SynthesizedTemplate.parse(template);
  return Object.fromEntries(
    Object.entries(Resources).flatMap(([logicalId, resource]) => {
      const entry = resource.Type === 'AWS::Lambda::Function' ? resource.Metadata?.[HANDLER_METADATA_KEY] : undefined;
      return typeof entry === 'string' ? [[logicalId, entry]] : [];
    }),
  );
};

/**
 * The template's one state machine, rendered to ASL. `resolve` maps intrinsics such as
 * `{ "Fn::GetAtt": ["FanOutDispatchFunctionEF273FA3", "Arn"] }` to the ARNs a runner uses.
 *
 * @example
 * const handlers = functionHandlers(template);
 * const asl = stateMachineDefinition(template, (i) => localArnFor(i, handlers));
 */
export const stateMachineDefinition = (template: unknown, resolve?: (intrinsic: Intrinsic) => string): AslStateMachine => {
  const machines = Object.values(SynthesizedTemplate.parse(template).Resources).filter(
    (resource) => resource.Type === 'AWS::StepFunctions::StateMachine',
  );
  const [machine] = machines;
  if (machines.length !== 1 || !machine) throw new DefinitionNotRenderable(`expected one state machine in the template, found ${machines.length}`);
  return renderDefinition(machine.Properties?.DefinitionString, resolve);
};
