import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const Manifest = z.object({ name: z.string(), version: z.string() });

/**
 * The name and version of the package this CLI ships in: the package.json nearest above this
 * module, which is the package root both in the repository (lib/cli/) and installed (dist/lib/cli/).
 *
 * @example
 * cliPackage() // { name: '@tessera-fanout/tessera', version: '0.1.0' }
 */
export const cliPackage = (from: string = fileURLToPath(import.meta.url)): z.infer<typeof Manifest> => {
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) return Manifest.parse(JSON.parse(readFileSync(file, 'utf8')));
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
};

/**
 * What `tessera --version` prints: the package's name and version.
 *
 * @example
 * versionLine() // '@tessera-fanout/tessera 0.1.0'
 */
export const versionLine = (): string => {
  const { name, version } = cliPackage();
  return `${name} ${version}`;
};
