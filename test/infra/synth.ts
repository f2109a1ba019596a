import { App, Aspects, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { AslStateMachine } from '../../lib/infra/asl';
import { stateMachineDefinition } from '../../lib/infra/synthesized';
import { TesseraStack, type TesseraStackProps } from '../../lib/infra/stack';
import { cdkJsonContext } from '../../lib/infra/cdk-context';
import { exampleFanOut } from '../../examples/app/cdk';

export { cdkJsonContext };

/** An app whose stacks skip esbuild: the assets become placeholders, so a synth costs no bundling. */
export const unbundledApp = (extraContext: Record<string, unknown> = {}): App =>
  new App({
    context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [], 'aws:cdk:enable-path-metadata': true, ...extraContext },
  });

export interface Synthesized {
  readonly stack: TesseraStack;
  readonly template: Template;
  readonly asl: AslStateMachine;
}

/** Stack props of a test: the fan-out's default to the example app's (its worker module and kind settings). */
export type TestStackProps = Omit<TesseraStackProps, 'fanOut'> & { readonly fanOut?: Partial<TesseraStackProps['fanOut']> };

/** Synthesizes a `TesseraStack` of the example app without bundling, with cdk-nag's AwsSolutions pack attached. */
export const synthTesseraStack = (props: TestStackProps = {}): Synthesized => {
  const app = unbundledApp();
  const stack = new TesseraStack(app, 'Tessera', { ...props, fanOut: { ...exampleFanOut({ faultInjection: false }), ...props.fanOut } });
  Aspects.of(app).add(new AwsSolutionsChecks());
  const template = Template.fromStack(stack);
  return { stack, template, asl: stateMachineDefinition(template.toJSON()) };
};

/** cdk-nag errors and warnings left unsuppressed on a stack, as "rule: path" lines. */
export const nagFindings = (stack: Stack): string[] =>
  [
    ...Annotations.fromStack(stack).findError('*', Match.stringLikeRegexp('AwsSolutions-.*')),
    ...Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('AwsSolutions-.*')),
  ].map((finding) => `${String(finding.entry.data).split(':')[0]}: ${finding.id}`);

/** Logical id of the one resource of `type` whose construct path ends with `pathSuffix`. */
export const logicalIdAt = (template: Template, type: string, pathSuffix: string): string => {
  const matches = Object.entries(template.findResources(type)).filter(([, resource]) => String(resource.Metadata?.['aws:cdk:path'] ?? '').endsWith(pathSuffix));
  if (matches.length !== 1) throw new Error(`expected one ${type} at …${pathSuffix}, found ${matches.length}`);
  return matches[0]![0];
};
