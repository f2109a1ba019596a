import { describe, expect, test } from 'vitest';
import { findState, renderDefinition, renderIntrinsicString } from '../../lib/infra/asl';
import { DefinitionNotRenderable } from '../../lib/infra/errors';

const joined = {
  'Fn::Join': [
    '',
    [
      '{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:',
      { Ref: 'AWS::Partition' },
      ':states:::lambda:invoke","Parameters":{"FunctionName":"',
      { 'Fn::GetAtt': ['Fn1234', 'Arn'] },
      '"},"End":true}}}',
    ],
  ],
};

describe('renderDefinition', () => {
  test('joins the parts, writing intrinsics as placeholders', () => {
    const asl = renderDefinition(joined);
    expect(asl.States.A).toEqual({
      Type: 'Task',
      Resource: 'arn:${AWS::Partition}:states:::lambda:invoke',
      Parameters: { FunctionName: '${Fn1234.Arn}' },
      End: true,
    });
  });

  test('lets the caller resolve intrinsics, as the local cloud does with its own ARNs', () => {
    const asl = renderDefinition(joined, (intrinsic) => ('Ref' in intrinsic ? 'aws' : 'arn:aws:lambda:us-east-1:000000000000:function:dispatch'));
    expect(asl.States.A?.Resource).toBe('arn:aws:states:::lambda:invoke');
    expect(asl.States.A?.Parameters).toEqual({ FunctionName: 'arn:aws:lambda:us-east-1:000000000000:function:dispatch' });
  });

  test('accepts a plain string definition', () => {
    expect(renderDefinition('{"StartAt":"S","States":{"S":{"Type":"Succeed"}}}').StartAt).toBe('S');
  });

  test('refuses what is not a state machine, saying why', () => {
    expect(() => renderDefinition({ 'Fn::Sub': 'x' })).toThrow(DefinitionNotRenderable);
    expect(() => renderDefinition('{"States":{}}')).toThrow(/not a state machine/);
    expect(() => renderDefinition('{not json')).toThrow(/not JSON/);
    expect(() => renderIntrinsicString({ 'Fn::Join': ['', [{ 'Fn::ImportValue': 'x' }]] })).toThrow(/unsupported intrinsic Fn::ImportValue/);
  });
});

describe('findState', () => {
  test('finds states inside a Map item processor', () => {
    const asl = renderDefinition(
      JSON.stringify({
        StartAt: 'M',
        States: { M: { Type: 'Map', End: true, ItemProcessor: { StartAt: 'Inner', States: { Inner: { Type: 'Succeed' } } } } },
      }),
    );
    expect(findState(asl, 'Inner')).toEqual({ Type: 'Succeed' });
    expect(findState(asl, 'Missing')).toBeUndefined();
  });
});
