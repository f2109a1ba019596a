import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { definitionKey, validatedDefinitionsIn } from '../../lib/local/definition-cache';
import { TemplateResolutionError } from '../../lib/local/errors';
import { stateMachinesFromTemplate } from '../../lib/local/state-machines';
import { createResolver, parseTemplate, type LocalEnvironment } from '../../lib/local/template';

const root = mkdtempSync(join(tmpdir(), 'tessera-definitions-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const environment: LocalEnvironment = { region: 'eu-west-1', queueUrl: (name) => `http://sqs.test/000000000000/${name}`, httpApiUrl: 'http://127.0.0.1:3999' };

const resolverFor = (definition: unknown) =>
  createResolver(
    parseTemplate({ Resources: { Machine: { Type: 'AWS::StepFunctions::StateMachine', Properties: { DefinitionString: JSON.stringify(definition) } } } }),
    environment,
  );

const valid = { StartAt: 'Hello', States: { Hello: { Type: 'Pass', Result: 'hi', End: true } } };
/** Passes the local cloud's own checks (known state types, local Tasks) but not asl-validator: StartAt names no state. */
const invalid = { StartAt: 'Nowhere', States: { Hello: { Type: 'Pass', End: true } } };

describe('validated state machine definitions in the local cache', () => {
  it('remembers a definition that passed validation, and builds a working machine from the remembered verdict', async () => {
    const dir = join(root, 'remember');
    const validated = validatedDefinitionsIn(dir);
    expect(stateMachinesFromTemplate(resolverFor(valid), { validated })).toHaveLength(1);
    // Keyed by the definition as the template gives it (validation adds fields to the object it checks).
    expect(readdirSync(dir)).toEqual([definitionKey(structuredClone(valid), { checkArn: true, checkPaths: true })]);
    const [again] = stateMachinesFromTemplate(resolverFor(valid), { validated });
    expect(readdirSync(dir)).toHaveLength(1);
    expect(await again?.machine.run({}).result).toBe('hi');
  });

  it('refuses an invalid definition every time and never remembers it', () => {
    const dir = join(root, 'invalid');
    const validated = validatedDefinitionsIn(dir);
    for (let attempt = 0; attempt < 2; attempt += 1) {
      expect(() => stateMachinesFromTemplate(resolverFor(invalid), { validated })).toThrow(TemplateResolutionError);
    }
    expect(() => readdirSync(dir)).toThrow();
  });

  it('validates a changed definition again: a remembered valid one does not let an invalid one through', () => {
    const validated = validatedDefinitionsIn(join(root, 'changed'));
    stateMachinesFromTemplate(resolverFor(valid), { validated });
    expect(() => stateMachinesFromTemplate(resolverFor(invalid), { validated })).toThrow(/StartAt|Nowhere/);
  });

  it('keys a verdict by the definition and the validation options', () => {
    const options = { checkArn: true, checkPaths: true };
    expect(definitionKey(valid, options)).toBe(definitionKey(structuredClone(valid), { ...options }));
    expect(definitionKey(valid, options)).not.toBe(definitionKey(invalid, options));
    expect(definitionKey(valid, options)).not.toBe(definitionKey(valid, { checkArn: true, checkPaths: false }));
  });

  it('validates every time without a cache', () => {
    expect(() => stateMachinesFromTemplate(resolverFor(invalid))).toThrow(TemplateResolutionError);
  });
});
