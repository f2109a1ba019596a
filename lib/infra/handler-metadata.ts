import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * CloudFormation metadata key on every tessera `AWS::Lambda::Function`: the handler's module path
 * relative to {@link PACKAGE_ROOT}. The CDK construct writes it and the local cloud reads it to
 * map a function of the synthesized template to the module it runs, so it is an interface, not
 * decoration. It lives in this CDK-free module so the local cloud can import it without the CDK.
 *
 * @example
 * (fn.node.defaultChild as CfnResource).addMetadata(HANDLER_METADATA_KEY, 'functions/dispatch.ts');
 */
export const HANDLER_METADATA_KEY = 'tessera:handler';

/** The npm name of the core package, which holds this module: what a project depends on and imports. */
export const CORE_PACKAGE = '@tessera-fanout/tessera';

/**
 * The root of the tessera package, found from this module's own location: `functions/` and
 * `lib/` are below it, in the repository (`.ts`, run by tsx) as in the built package (`dist/`,
 * `.js`). Handler modules are located from here, never from the current directory.
 */
export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The path, relative to {@link PACKAGE_ROOT}, of a module of the package given without its
 * extension: the `.ts` source in the repository, the `.js` file in the built package.
 *
 * @example
 * packageModule('functions/dispatch') // 'functions/dispatch.ts' in the repository
 */
export const packageModule = (withoutExtension: string): string => {
  const candidates = [`${withoutExtension}.ts`, `${withoutExtension}.js`];
  return candidates.find((path) => existsSync(join(PACKAGE_ROOT, path))) ?? (candidates[0] as string);
};
