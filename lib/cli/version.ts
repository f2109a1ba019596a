import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const Manifest = z.object({ name: z.string(), version: z.string() });

/**
 * Where the CLI's package.json is, relative to this module: in the repository (lib/cli/) it is the
 * local package's, packages/local/package.json; in the installed package (dist/lib/cli/) it is
 * the package root's, three levels up. The first that exists wins.
 */
const MANIFEST_PATHS = ['../../packages/local/package.json', '../../../package.json'];

/**
 * The name and version of the package this CLI ships in, @tessera-fanout/local: read from its
 * package.json (MANIFEST_PATHS), in the repository as installed. `from` is this module's URL.
 *
 * @example
 * cliPackage() // { name: '@tessera-fanout/local', version: '0.1.0' }
 */
export const cliPackage = (from: string = import.meta.url): z.infer<typeof Manifest> => {
  const paths = MANIFEST_PATHS.map((path) => fileURLToPath(new URL(path, from)));
  const found = paths.find((path) => existsSync(path));
  if (found === undefined) throw new Error(`the CLI's package.json is missing: looked for ${paths.join(' and ')}`);
  return Manifest.parse(JSON.parse(readFileSync(found, 'utf8')));
};

/**
 * What `tessera --version` prints: the package's name and version.
 *
 * @example
 * versionLine() // '@tessera-fanout/local 0.1.0'
 */
export const versionLine = (): string => {
  const { name, version } = cliPackage();
  return `${name} ${version}`;
};
