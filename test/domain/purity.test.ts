import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPOSITORY as root, sourcesUnder, specifiersOf } from '../support/imports';

/**
 * The domain and the contract stay pure: they import zod and each other, and
 * nothing else: no AWS SDK, no aws-lambda types, no CDK, no Node built-ins, no adapters.
 */
const PURE = ['lib/contract', 'lib/domain'];
const ALLOWED_PACKAGES = ['zod'];

/** Why a specifier is not allowed in `file`, or undefined when it is. */
const violation = (file: string, specifier: string): string | undefined => {
  if (specifier.startsWith('.')) {
    const target = relative(root, resolve(root, dirname(file), specifier));
    return PURE.some((folder) => target === folder || target.startsWith(`${folder}/`))
      ? undefined
      : `${file} imports ${specifier} (${target}), outside ${PURE.join(' and ')}`;
  }
  const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : (specifier.split('/')[0] ?? specifier);
  return ALLOWED_PACKAGES.includes(name) ? undefined : `${file} imports ${specifier}`;
};

describe('pure domain', () => {
  it('finds every kind of import the check must see', () => {
    const source = [
      "import { SQSClient } from '@aws-sdk/client-sqs';",
      "import type {\n  Handler,\n} from 'aws-lambda';",
      "export * from '../ledger/table';",
      "import 'aws-cdk-lib';",
      "const x = await import('node:fs');",
      "const y = require('constructs');",
    ].join('\n');
    const specifiers = specifiersOf(source);
    expect(specifiers).toEqual(['@aws-sdk/client-sqs', 'aws-lambda', '../ledger/table', 'aws-cdk-lib', 'node:fs', 'constructs']);
    expect(specifiers.map((s) => violation('lib/domain/x.ts', s) !== undefined)).toEqual([true, true, true, true, true, true]);
  });

  it('lets lib/domain and lib/contract import only zod and each other', () => {
    const files = PURE.flatMap(sourcesUnder);
    expect(files).toContain('lib/domain/reconcile.ts');
    const imports = files.flatMap((file) => specifiersOf(readFileSync(join(root, file), 'utf8')).map((specifier) => ({ file, specifier })));
    expect(imports).toContainEqual({ file: 'lib/domain/reconcile.ts', specifier: '../contract' });
    expect(imports.flatMap(({ file, specifier }) => violation(file, specifier) ?? [])).toEqual([]);
  });
});
