import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/**
 * State machine definitions already validated: validating one (asl-validator compiles its JSON
 * schemas with ajv) costs more than a second of CPU at every start, and its verdict depends only on
 * the definition and the validator. Each verdict is keyed by a SHA-256 of the definition's JSON,
 * the validation options and the installed versions of aws-local-stepfunctions and asl-validator, so
 * a changed definition or validator is validated again. Only passing verdicts are kept.
 */
export interface ValidatedDefinitions {
  /** Whether the definition of this {@link definitionKey} passed validation before. */
  has(key: string): boolean;
  /** Remembers that it passed. Never throws: an unwritable cache only means validating again. */
  add(key: string): void;
}

/** Bumped when the key's recipe changes. */
const FORMAT = 'tessera-validated-definition/1';

const installedVersion = (name: string): string => {
  try {
    const require = createRequire(import.meta.url);
    return (require(`${name}/package.json`) as { version: string }).version;
  } catch {
    return '(unknown)';
  }
};

let validators: string | undefined;

/**
 * The key of a definition's verdict. Taken before validating: aws-local-stepfunctions' validation
 * adds fields to the definition object it is given.
 *
 * @example
 * definitionKey({ StartAt: 'A', States: { A: { Type: 'Succeed' } } }, { checkPaths: true }) // 'c0ffee…'
 */
export const definitionKey = (definition: unknown, options: object): string => {
  validators ??= ['aws-local-stepfunctions', 'asl-validator'].map((name) => `${name}@${installedVersion(name)}`).join(' ');
  return createHash('sha256')
    .update(`${FORMAT}\0${validators}\0${JSON.stringify(options)}\0${JSON.stringify(definition)}`)
    .digest('hex');
};

/**
 * Verdicts kept as empty files named by their key under `dir` (`<cache>/validated-definitions`).
 *
 * @example
 * const validated = validatedDefinitionsIn(join(localCacheDir(), 'validated-definitions'));
 */
export const validatedDefinitionsIn = (dir: string): ValidatedDefinitions => ({
  has: (key) => existsSync(join(dir, key)),
  add: (key) => {
    try {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, key), '');
    } catch {
      // the next start validates again
    }
  },
});
