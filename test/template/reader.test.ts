import { describe, expect, it } from 'vitest';
import { CfnTemplate, createEvaluator, outputValues, resourcesOfType, type IntrinsicSemantics } from '../../lib/template/reader';

const template = CfnTemplate.parse({
  Resources: {
    Zeta: { Type: 'AWS::SQS::Queue' },
    Alpha: { Type: 'AWS::SQS::Queue', Properties: { QueueName: 'alpha' } },
    Fn: { Type: 'AWS::Lambda::Function' },
  },
  Outputs: { QueueUrl: { Value: { Ref: 'Alpha' } } },
});

class ReadError extends Error {}

/** Refs become `<Name>`, attributes `<Id.Attribute>`: enough to see what the evaluator asked for. */
const semantics: IntrinsicSemantics = {
  ref: (name) => `<${name}>`,
  attribute: (logicalId, attribute) => `<${logicalId}.${attribute}>`,
  error: (path, detail) => new ReadError(`${path}: ${detail}`),
  unsupported: (intrinsic, path) => new ReadError(`${path}: no ${intrinsic}`),
};

describe('template reader', () => {
  it('lists the resources of the given types in logical-ID order', () => {
    expect(resourcesOfType(template, 'AWS::SQS::Queue').map((entry) => entry.logicalId)).toEqual(['Alpha', 'Zeta']);
    expect(resourcesOfType(template, 'AWS::SQS::Queue', 'AWS::Lambda::Function').map((entry) => entry.logicalId)).toEqual(['Alpha', 'Fn', 'Zeta']);
    expect(resourcesOfType(template, 'AWS::DynamoDB::Table')).toEqual([]);
  });

  it('reads the outputs unresolved', () => {
    expect(outputValues(template)).toEqual({ QueueUrl: { Ref: 'Alpha' } });
    expect(outputValues(CfnTemplate.parse({ Resources: {} }))).toEqual({});
  });

  it('evaluates Join, Sub, Select and Split over the reader’s Ref and GetAtt', () => {
    const { resolve, resolveString } = createEvaluator(semantics);
    expect(resolveString({ 'Fn::Join': ['/', [{ Ref: 'Queue' }, 'x', 3]] }, 'p')).toBe('<Queue>/x/3');
    expect(resolveString({ 'Fn::Sub': 'arn:${AWS::Partition}:${Fn.Arn}:${!Literal}' }, 'p')).toBe('arn:<AWS::Partition>:<Fn.Arn>:${Literal}');
    expect(resolveString({ 'Fn::Select': [1, { 'Fn::Split': [',', 'a,b,c'] }] }, 'p')).toBe('b');
    expect(resolve({ Nested: [{ 'Fn::GetAtt': ['Fn', 'Arn'] }, 'Fn.Arn'] }, 'p')).toEqual({ Nested: ['<Fn.Arn>', 'Fn.Arn'] });
  });

  it('fails with the reader’s own errors, naming the path', () => {
    const { resolve } = createEvaluator(semantics);
    expect(() => resolve({ 'Fn::ImportValue': 'x' }, 'Outputs.A.Value')).toThrow(new ReadError('Outputs.A.Value: no Fn::ImportValue'));
    expect(() => resolve({ 'Fn::Join': ['', 'not a list'] }, 'Outputs.A.Value')).toThrow(
      new ReadError('Outputs.A.Value.Fn::Join.1: Fn::Join needs a list, got "not a list"'),
    );
  });
});
